export { SessionLimits, type SessionLimitReplies, type SessionLimitSettings } from './session_limits.ts'
export { SmtpReply, type SmtpReplyOptions } from './smtp_reply.ts'
