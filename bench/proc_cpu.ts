import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'

/** Clock ticks per second of /proc/<pid>/stat times (100 on every common Linux). */
export const TICKS = (() => {
  try { return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100 } catch { return 100 }
})()

/** User + system CPU time of another process in microseconds, from /proc; 0 once it is gone. */
export function processCpuUs (pid: number | undefined): number {
  if (pid === undefined) return 0
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // the command name may contain spaces; fields after its closing parenthesis are fixed
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 1e6 / TICKS
  } catch {
    return 0
  }
}

/** CPU microseconds a set of processes spent between two snapshots. */
export function cpuSnapshot (pids: ReadonlyArray<number | undefined>): () => number {
  const before = pids.map(processCpuUs)
  return () => pids.reduce((sum: number, pid, i) => sum + Math.max(0, processCpuUs(pid) - before[i]!), 0)
}
