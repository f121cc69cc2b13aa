import type { BenchFn } from './types.ts'
import { runRatelimitBench } from './ratelimit.ts'
import { runScaleBench } from './scale.ts'

/**
 * Every benchmark `npm run bench` knows, in the order a full run takes them.
 * Adding one is one import and one line here: `name: { title, run }`.
 */
export const BENCHMARKS: Record<string, { title: string, run: BenchFn }> = {
  ratelimit: { title: 'Per-key rate limits across two gateway processes', run: runRatelimitBench },
  scale: { title: 'Engine scale-out: 1, 2 and 3 engine processes sharing the shards', run: runScaleBench }
}
