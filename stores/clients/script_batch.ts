import type { Redis } from 'ioredis'
import { ItemFailure, TurnBatch } from '../batching/mod.ts'

type Arg = string | number

/** An error Redis raised for one call of an isolated batch, named as ioredis names a command's error reply. */
export class ReplyError extends Error {
  override readonly name = 'ReplyError'
}

interface Call { keys: readonly string[], args: readonly Arg[] }

type BatchRedis = Redis & Record<string, (numKeys: number, keys: string[], args: Arg[]) => Promise<unknown[]>>

/** Calls of one script gathered into one EVALSHA when the event loop turns; more than this start another. */
export const MAX_SCRIPT_BATCH = 256

/**
 * Wraps a one-call Lua script (which reads `KEYS` and `ARGV`) so that one invocation runs it for many calls.
 * ARGV[1] is the number of calls, then each call's key and argument counts, then every call's arguments in
 * order; KEYS holds every call's keys in order. The script may keep per-batch memory in the table `BATCH`, and
 * `finish` (Lua run once after every call) can then do in one command what the calls would each have done.
 */
export function batchedLua (body: string, finish = '', isolate = false): string {
  return `local __KEYS, __ARGV = KEYS, ARGV
local BATCH = {}
local function one (KEYS, ARGV)
${body}
end
local n = tonumber(__ARGV[1])
local out = {}
local ki, ai = 0, 1 + 2 * n
for i = 1, n do
  local nk, na = tonumber(__ARGV[2 * i]), tonumber(__ARGV[2 * i + 1])
  local k, a = {}, {}
  for j = 1, nk do k[j] = __KEYS[ki + j] end
  for j = 1, na do a[j] = __ARGV[ai + j] end
  ki = ki + nk
  ai = ai + na
${isolate ? `  local ok, r = pcall(one, k, a)
  if ok then r = { 1, r or false } else r = { 0, type(r) == 'table' and r.err or tostring(r) } end` : `  local r = one(k, a)
  if r == nil then r = false end`}
  out[i] = r
end
${finish}
return out
`
}

/**
 * Runs a Lua script for every call made in one turn of the event loop as a single EVALSHA, so that a hundred
 * concurrent requests cost Redis one script execution and the client one command instead of a hundred of
 * each. Calls keep their order, so a batch behaves as the same calls made one after another. When Redis fails,
 * every call of the batch rejects with the same error. With `isolate`, a call whose script raises an error (a
 * command Redis refuses) rejects alone with that error, as it would have on its own (what it wrote before the
 * error stays written, as with any script); the other calls of the batch go on.
 */
export class ScriptBatch<R> {
  private readonly redis: BatchRedis
  private readonly isolate: boolean
  private readonly batch: TurnBatch<Call, R>

  constructor (
    redis: Redis, private readonly name: string, lua: string, opts: { finish?: string, maxBatch?: number, isolate?: boolean } = {}
  ) {
    const r = redis as BatchRedis
    this.isolate = opts.isolate === true
    if (typeof r[name] !== 'function') redis.defineCommand(name, { lua: batchedLua(lua, opts.finish, this.isolate) })
    // A batch is one command already: it is written at once rather than through ioredis' auto-pipeline, which
    // waits one more event-loop turn, builds a pipeline object per turn, and holds everything back while its
    // previous pipeline awaits an answer (a large read-model batch, say).
    const ignored = redis.options.autoPipeliningIgnoredCommands ?? []
    if (!ignored.includes(name)) redis.options.autoPipeliningIgnoredCommands = [...ignored, name]
    this.redis = r
    this.batch = new TurnBatch({ flush: async (calls) => await this.run(calls), maxItems: opts.maxBatch ?? MAX_SCRIPT_BATCH })
  }

  async call (keys: readonly string[], args: readonly Arg[]): Promise<R> {
    return await this.batch.add({ keys, args })
  }

  private async run (calls: Call[]): Promise<Array<R | ItemFailure>> {
    const keys: string[] = []
    const args: Arg[] = [calls.length]
    for (const c of calls) args.push(c.keys.length, c.args.length)
    for (const c of calls) {
      for (const k of c.keys) keys.push(k)
      for (const a of c.args) args.push(a)
    }
    const results = await this.redis[this.name]!(keys.length, keys, args)
    if (!this.isolate) return results as R[]
    return results.map((result) => {
      const [ok, value] = result as [number, unknown]
      return ok === 1 ? value as R : new ItemFailure(new ReplyError(String(value)))
    })
  }
}
