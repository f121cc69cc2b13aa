import type { BenchFn } from './types.ts'
import { runRatelimitBench } from './ratelimit.ts'
import { runSoakBench } from './soak.ts'

/**
 * Every benchmark `npm run bench` knows, in the order a full run takes them.
 * Adding one is one import and one line here: `name: { title, run }`.
 */
export const BENCHMARKS: Record<string, { title: string, run: BenchFn }> = {
  ratelimit: { title: 'Per-key rate limits across two gateway processes', run: runRatelimitBench },
  soak: { title: 'Soak with injected faults', run: runSoakBench }
}
