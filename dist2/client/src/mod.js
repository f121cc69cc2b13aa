export { OutboxClient } from './client.js';
export { OutboxApiError, OutboxConnectionError, parseRetryAfter } from './errors.js';
export { DEFAULT_RETRY, RETRYABLE_STATUS, retryDelay } from './retry.js';
export { verifyWebhook } from './verify_webhook.js';
//# sourceMappingURL=mod.js.map