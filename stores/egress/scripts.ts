import type { ChainableCommander, Redis } from 'ioredis'
import { ACQUIRE_LUA } from './acquire.lua.ts'
import { INDEX_LANE_LUA } from './index_lane.lua.ts'
import { LANE_VIEW_LUA } from './lane_view.lua.ts'
import { NOTE_WAITING_LUA } from './note_waiting.lua.ts'
import { RENEW_LUA } from './renew.lua.ts'
import { REPLY_LUA } from './reply.lua.ts'
import { SEND_LUA } from './send.lua.ts'
import { SEND_REFUND_LUA } from './send_refund.lua.ts'
import { THROTTLE_READ_LUA } from './throttle_read.lua.ts'
import { WARMUP_REFUND_LUA } from './warmup_refund.lua.ts'
import { WARMUP_TAKE_LUA } from './warmup_take.lua.ts'

/** The egress scripts by the command name ioredis gives them, with how many of their arguments are keys. */
const SCRIPTS = {
  ob_eg_acquire: { numberOfKeys: 1, lua: ACQUIRE_LUA },
  ob_eg_renew: { numberOfKeys: 1, lua: RENEW_LUA },
  ob_eg_send: { numberOfKeys: 2, lua: SEND_LUA },
  ob_eg_send_refund: { numberOfKeys: 2, lua: SEND_REFUND_LUA },
  ob_eg_reply: { numberOfKeys: 1, lua: REPLY_LUA },
  ob_eg_throttle: { numberOfKeys: 1, lua: THROTTLE_READ_LUA },
  ob_eg_wu_take: { numberOfKeys: 2, lua: WARMUP_TAKE_LUA },
  ob_eg_wu_refund: { numberOfKeys: 2, lua: WARMUP_REFUND_LUA },
  ob_eg_wait: { numberOfKeys: 1, lua: NOTE_WAITING_LUA },
  ob_eg_index: { numberOfKeys: 1, lua: INDEX_LANE_LUA },
  ob_eg_view: { numberOfKeys: 5, lua: LANE_VIEW_LUA }
} as const

type ScriptName = keyof typeof SCRIPTS
type Arg = string | number

/** A Redis client with the egress scripts as commands (ioredis runs them by digest and loads them when missing). */
export type EgressRedis = Redis & { [N in ScriptName]: (...args: Arg[]) => Promise<unknown> }
export type EgressPipeline = ChainableCommander & { [N in ScriptName]: (...args: Arg[]) => EgressPipeline }

/** Defines the scripts on `redis` once, however many EgressState instances share the client. */
export function withEgressScripts (redis: Redis): EgressRedis {
  const commands = redis as unknown as Record<string, unknown>
  for (const [name, script] of Object.entries(SCRIPTS)) {
    if (typeof commands[name] !== 'function') redis.defineCommand(name, script)
  }
  return redis as EgressRedis
}
