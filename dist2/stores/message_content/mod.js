/** The rendered content of sent messages (GET /v1/messages/{id}/content): written by the engine, read by the gateway. */
export { MessageContentStore, CONTENT_PART_BYTES } from './message_content_store.js';
//# sourceMappingURL=mod.js.map