/**
 * The contract every process agrees on: the queued message, the inbound job, events, bounce categories, subjects, the stream and
 * consumer table, the error table, ids, return-path (VERP) encoding, tracking tokens, template rendering, content
 * rules and which addresses are never a public destination.
 * Data and pure functions only; nothing here opens a connection (a unit test walks the imports).
 */
export * from './errors.ts'
export { JETSTREAM_ROOM_CODES, isJetStreamFull } from './jetstream_errors.ts'
export * from './ids.ts'
export * from './subjects.ts'
export * from './records.ts'
export * from './send.ts'
export * from './queued_message.ts'
export { salvageQueued } from './queued_salvage.ts'
export * from './jetstream_table.ts'
export * from './store_budget.ts'
export * from './events.ts'
export * from './webhook_filters.ts'
export * from './message_streams.ts'
export * from './domain_health.ts'
export { BOUNCE_CATEGORIES, bounceCategory, enhancedStatus, suppresses } from './bounce_categories.ts'
export * from './tracking_tokens.ts'
export * from './privacy.ts'
export * from './inbound_job.ts'
export {
  STATUS_RANK, RECIPIENT_STATUSES, FINAL_STATUS_ORDER, recipientStatusAfter, COUNTED_RECIPIENT_STATUSES, messageStatusOf, deliveredCount,
  type RecipientStatus, type RecipientCounts, type CountedRecipientStatus
} from './message_status.ts'
export {
  missingVariables, renderContent, renderTemplate, templateVariables, type MessageContent, type TemplateContent, type TemplateVariables
} from './templates.ts'
export * from './verp.ts'
export * from './domain_hosts.ts'
export * from './dmarc_address.ts'
export * from './content_rules/mod.ts'
export { clientIdentity } from './client_identity.ts'
export { isBlockedAddress, isLocalhostName } from './public_address.ts'
export * from './queued_content.ts'
export { ListBudget, itemsWithin, LIST_ENVELOPE_BYTES } from './list_budget.ts'
export { SentAttachmentSchema, SentContentSchema, type SentAttachment, type SentContent } from './sent_content.ts'
export * from './egress/mod.ts'
export * from './queues.ts'
export * from './reputation.ts'
