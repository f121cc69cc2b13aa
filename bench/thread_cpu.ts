import { readdirSync, readFileSync } from 'node:fs'
import { TICKS } from './proc_cpu.ts'

/**
 * CPU time of each thread of a process (/proc/<pid>/task/<tid>/stat), to tell the JavaScript threads a CPU
 * profile sees from the ones it does not (V8's background threads: garbage collection, compilers; libuv's pool:
 * zlib, crypto callbacks, DNS). Every Node thread is named `node`, so the caller picks them by their CPU.
 */
export function threadCpuUs (pid: number | undefined): Map<number, number> {
  const out = new Map<number, number>()
  if (pid === undefined) return out
  let tids: string[] = []
  try { tids = readdirSync(`/proc/${pid}/task`) } catch { return out }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) * 1e6 / TICKS)
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out
}

/**
 * Splits a process's CPU between two snapshots into its main thread, the `workers` busiest other threads (the
 * profiled worker threads, which on the delivery path each run far more than any background thread) and the rest.
 */
export function splitThreadCpu (
  pid: number, before: Map<number, number>, after: Map<number, number>, workers: number
): { mainUs: number, workersUs: number[], restUs: number, threads: number } {
  const deltas = [...after].map(([tid, us]) => ({ tid, us: Math.max(0, us - (before.get(tid) ?? 0)) }))
  const mainUs = deltas.find((d) => d.tid === pid)?.us ?? 0
  const others = deltas.filter((d) => d.tid !== pid).map((d) => d.us).sort((x, y) => y - x)
  const workersUs = others.slice(0, workers)
  return { mainUs, workersUs, restUs: others.slice(workers).reduce((s, us) => s + us, 0), threads: deltas.length }
}
