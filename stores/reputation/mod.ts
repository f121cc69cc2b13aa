/** Reputation guards: the rolling bounce and complaint windows per organisation and stream in Redis, and the pause decision. */
export { ReputationWindow, REPUTATION_FIELDS, type ReputationField } from './reputation_window.ts'
export { ReputationGuard, reputationField } from './reputation_guard.ts'
