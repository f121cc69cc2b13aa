/**
 * Egress, the data and pure functions every process agrees on: which mailbox provider a destination belongs to,
 * the limits of a lane (source × provider), the replies that slow, pause or take out a source, and the warm-up
 * curve. Nothing here opens a connection; the state lives in stores/egress/.
 */
export { PROVIDERS, MAX_SITE_ID_LENGTH, SITE_PREFIX, isKnownProvider, providerOf, type Provider } from './providers.ts'
export {
  DEFAULT_LIMITS, LIMIT_MAXIMA, limitsFor, type LaneLimits, type LimitOverrides
} from './shaping.ts'
export { REPLY_RULES, replyAction, type ReplyAction, type ReplyRule } from './reply_rules.ts'
export {
  DAY_MS, DEFAULT_WARMUP, WARMUP_MAXIMA, warmupAllowance, warmupDay, type WarmupStep
} from './warmup.ts'
export * from './records.ts'
