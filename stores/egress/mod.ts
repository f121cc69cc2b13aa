/** The egress state in Redis (keys `ob:eg:*`): connection slots, lane rates and throttles, warm-up counts, waiting marks. */
export {
  EgressState, type EgressStateOptions, RECOVER_EVERY_MS, SLOW_QUIET_MS, THROTTLE_KEEP_MS, WARMUP_KEEP_MS, WAITING_MAX_AGE_MS,
  MAX_WAITING_PER_LANE, LANE_INDEX_KEEP_MS, SLOW_REDIS_WAIT_MS
} from './egress_state.ts'
export { MAX_INDEXED_LANES } from './snapshot.ts'
export { laneViews, type LaneView } from './lane_views.ts'
export { laneId, parseLane, normalizeLane, MAX_LANE_ID_LENGTH } from './keys.ts'
export type { ReplyAction, LaneGate, LaneThrottle, LaneSnapshot, LaneRecovery, WaitReason } from './types.ts'
export { recoverySteps } from './types.ts'
