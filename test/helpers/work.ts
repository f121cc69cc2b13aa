import { readFileSync } from 'node:fs'

/**
 * Work measured as CPU time of this process (every thread: the gateway, engine and inbound run in it), for
 * growth tests: the ratio between the work for inputs of size n and 8n tells linear (about 8) from quadratic
 * (about 64) on a noisy machine where an absolute time would not. Each figure is the least of `runs` runs, which
 * keeps the background work of the process (lease renewals, polls) out of it as far as possible.
 */
export async function cpuMs (work: () => Promise<void>, runs = 3): Promise<number> {
  let least = Infinity
  for (let i = 0; i < runs; i++) {
    const before = process.cpuUsage()
    await work()
    const used = process.cpuUsage(before)
    least = Math.min(least, (used.user + used.system) / 1000)
  }
  return least
}

/**
 * Below this many ms of CPU a figure for size n says more about the machine than about the work (a busy 2-core
 * host has measured 7 ms for an input that takes 28 ms when quiet), so growth is judged against at least this.
 */
const GROWTH_FLOOR_MS = 30

/**
 * True when the work for 8n (`large`) grew about linearly from the work for n (`small`): under 20 times, where
 * quadratic work would be about 64 times. The figure for n counts as at least GROWTH_FLOOR_MS.
 */
export function grewAboutLinearly (small: number, large: number): boolean {
  return large / Math.max(small, GROWTH_FLOOR_MS) < 20
}

/**
 * CPU time (ms) used so far by this process's main thread alone, the thread the gateway's event loop runs on:
 * utime plus stime in /proc/self/task/<pid>/stat (Linux), counted in clock ticks of 10 ms.
 */
export function mainThreadCpuMs (): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')
  // fields after the command name, which is in parentheses and may hold spaces; utime and stime are fields 14 and 15
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** Adversarial HTML of about `n` elements in the shapes that make parsers work hardest. */
export const ADVERSARIAL_HTML = {
  nested: (n: number) => '<div>'.repeat(n),
  unclosed: (n: number) => '<p><b><i><span><table><td>'.repeat(Math.ceil(n / 6)),
  attributes: (n: number) => '<div ' + Array.from({ length: n }, (_, i) => `a${i}="x"`).join(' ') + '>text</div>'
} as const
