import { ServerProcess } from '../test/helpers/servers.ts'
import { engineRun, RemoteSink } from './engine.ts'

/**
 * The engine's delivery settings side by side on this machine: each combination of delivery threads and shard
 * capacity delivers the same 5 KB message (JetStream → engine → local sink), in turn, for `rounds` rounds.
 *
 *   node dist/bench/engine_sweep.js [rounds=2] [messages=2000]
 */
const rounds = Number(process.argv[2] ?? 2)
const messages = Number(process.argv[3] ?? 2000)
const settings = [
  { OB_ENGINE_THREADS: '1', OB_ENGINE_SHARD_CAPACITY: '64' },
  { OB_ENGINE_THREADS: '2', OB_ENGINE_SHARD_CAPACITY: '64' },
  { OB_ENGINE_THREADS: '2', OB_ENGINE_SHARD_CAPACITY: '16' },
  { OB_ENGINE_THREADS: '2', OB_ENGINE_SHARD_CAPACITY: '128' }
]
const nats = await ServerProcess.nats()
const redis = await ServerProcess.redis()
const sink = await RemoteSink.start()
let run = 0
try {
  for (let r = 0; r < rounds; r++) {
    for (const env of settings) {
      const load = (await import('node:os')).loadavg()[0]!.toFixed(1)
      // each run needs its own sending domain, which engineRun names after the message count
      const row = await engineRun(sink, nats, redis, messages + run++, env)
      console.log(
        `round ${r} threads ${env.OB_ENGINE_THREADS} capacity ${env.OB_ENGINE_SHARD_CAPACITY}: ` +
        `${row.msgs_per_s} msgs/s, ${row.cpu_us_per_msg} µs CPU/msg (load ${load})`
      )
    }
  }
} finally {
  await sink.close()
  await nats.dispose()
  await redis.dispose()
}
