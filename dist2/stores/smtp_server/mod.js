export { SessionLimits } from './session_limits.js';
export { SmtpReply } from './smtp_reply.js';
//# sourceMappingURL=mod.js.map