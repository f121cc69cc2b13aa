export { SessionLimits, type SessionLimitReplies, type SessionLimitSettings } from './session_limits.ts'
