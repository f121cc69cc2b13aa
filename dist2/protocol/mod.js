/**
 * The contract every process agrees on: the queued message, events, bounce categories, subjects, the stream and
 * consumer table, the error table, ids, return-path (VERP) encoding, tracking tokens, template rendering, content
 * rules and which addresses are never a public destination.
 * Data and pure functions only; nothing here opens a connection (a unit test walks the imports).
 */
export * from './errors.js';
export * from './ids.js';
export * from './subjects.js';
export * from './records.js';
export * from './send.js';
export * from './queued_message.js';
export * from './jetstream_table.js';
export * from './store_budget.js';
export * from './events.js';
export { BOUNCE_CATEGORIES, bounceCategory, enhancedStatus, suppresses } from './bounce_categories.js';
export * from './tracking_tokens.js';
export { STATUS_RANK, UNDELIVERED_STATUS_ORDER } from './message_status.js';
export { renderContent, renderTemplate, templateVariables } from './templates.js';
export * from './verp.js';
export * from './content_rules/mod.js';
export { clientIdentity } from './client_identity.js';
export { isBlockedAddress, isLocalhostName } from './public_address.js';
export * from './queued_content.js';
export { ListBudget, itemsWithin, LIST_ENVELOPE_BYTES } from './list_budget.js';
export { SentAttachmentSchema, SentContentSchema } from './sent_content.js';
//# sourceMappingURL=mod.js.map