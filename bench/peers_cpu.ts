import { readdirSync, readFileSync } from 'node:fs'
import { TICKS } from './proc_cpu.ts'

/**
 * CPU time of a process tree whose workers come and go, by process name: Postfix's master forks smtpd, cleanup,
 * smtp… and each exits after 100 uses or 100 s idle, taking its /proc entry with it. The tree is sampled every
 * SAMPLE_MS (the last figure of each process kept, by name); the exact total comes from the master's own time plus
 * the time of the children it reaped (`cutime`, `cstime`), so what a child spent between its last sample and its
 * exit is still counted, in a row of its own.
 */
const SAMPLE_MS = 200
const TICK_US = 1e6 / TICKS

interface Stat { ppid: number, comm: string, state: string, cpuUs: number, reapedUs: number }

export function readStat (pid: number): Stat | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const open = s.indexOf('(')
    const close = s.lastIndexOf(')')
    const f = s.slice(close + 2).split(' ')
    const t = TICK_US
    return {
      comm: s.slice(open + 1, close),
      state: f[0]!,
      ppid: Number(f[1]),
      cpuUs: (Number(f[11]) + Number(f[12])) * t,
      reapedUs: (Number(f[13]) + Number(f[14])) * t
    }
  } catch {
    return undefined
  }
}

/** Live (not zombie) children of `pid`, from /proc. */
export function childrenOf (pid: number): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    const p = Number(name)
    if (!Number.isInteger(p)) continue
    const st = readStat(p)
    if (st !== undefined && st.ppid === pid && st.state !== 'Z') out.push(p)
  }
  return out
}

/** Pure: the tree's CPU over a window, from its first and last samples. Exported for its unit test. */
export function treeCpu (
  root: { start: Stat, end: Stat },
  children: ReadonlyMap<number, { comm: string, first: number, last: number, atStart: boolean, aliveAtEnd: boolean }>
): { byName: Map<string, number>, unsampledUs: number, totalUs: number } {
  const byName = new Map<string, number>([[root.end.comm, root.end.cpuUs - root.start.cpuUs]])
  let sampled = root.end.cpuUs - root.start.cpuUs
  // Reaped during the window: the whole life of children that died in it, less what those alive at the start had spent before.
  let exact = root.end.cpuUs - root.start.cpuUs + root.end.reapedUs - root.start.reapedUs
  for (const c of children.values()) {
    const spent = c.last - (c.atStart ? c.first : 0)
    byName.set(c.comm, (byName.get(c.comm) ?? 0) + spent)
    sampled += spent
    if (c.aliveAtEnd) exact += spent
    else if (c.atStart) exact -= c.first
  }
  return { byName, unsampledUs: Math.max(0, exact - sampled), totalUs: Math.max(exact, sampled) }
}

/** Samples a root process and its children until `stop()`, which returns CPU µs by process name over the window. */
export class TreeSampler {
  private readonly children = new Map<number, { comm: string, first: number, last: number, atStart: boolean, aliveAtEnd: boolean }>()
  private readonly startStat: Stat
  private readonly timer: NodeJS.Timeout

  constructor (private readonly root: number) {
    const st = readStat(root)
    if (st === undefined) throw new Error(`process ${root} is not running`)
    this.startStat = st
    this.sample(true)
    this.timer = setInterval(() => this.sample(false), SAMPLE_MS)
  }

  private sample (atStart: boolean): Set<number> {
    const seen = new Set<number>()
    for (const pid of childrenOf(this.root)) {
      const st = readStat(pid)
      if (st === undefined) continue
      seen.add(pid)
      const c = this.children.get(pid)
      if (c === undefined) this.children.set(pid, { comm: st.comm, first: st.cpuUs, last: st.cpuUs, atStart, aliveAtEnd: false })
      else c.last = st.cpuUs
    }
    return seen
  }

  stop (): { byName: Map<string, number>, unsampledUs: number, totalUs: number } {
    clearInterval(this.timer)
    const alive = this.sample(false)
    for (const [pid, c] of this.children) c.aliveAtEnd = alive.has(pid)
    const end = readStat(this.root) ?? this.startStat
    return treeCpu({ start: this.startStat, end }, this.children)
  }
}
