import { outboxPath, stageOf, type Frame, type Stage } from './cpu_stages.ts'

/**
 * Reading V8 `.cpuprofile` files (what `node --cpu-prof` writes for the main thread and each worker thread) into
 * time per stage (bench/cpu_stages.ts) and per function. Pure: the CPU budget bench feeds it parsed files.
 *
 * Times: `startTime`, `endTime` and the running sum of `timeDeltas` are microseconds on the clock of
 * `process.hrtime()` (CLOCK_MONOTONIC on Linux), so a window taken with process.hrtime in another process cuts
 * them. Sample i stands for the time until sample i + 1 (the last one: until `endTime`), as Chrome's DevTools
 * reads it. `(idle)` samples are the thread waiting in its event loop: counted apart, never as CPU.
 *
 * V8 samples on the wall clock: a thread that the kernel takes off the CPU mid-function (the machine is busy)
 * gets no sample until it runs again, and the sample before the gap stands for the whole gap. On 2 shared cores
 * that tripled the non-idle time against /proc. So each sample counts at most CAP_INTERVALS sampling intervals
 * (the profile's median delta): time on the CPU; the uncapped sum is kept as `wallUs`.
 */
export interface CpuProfile {
  nodes: Array<{ id: number, callFrame: Frame & { lineNumber?: number }, children?: number[] }>
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

/** A span of the monotonic clock, microseconds. */
export interface Window { fromUs: number, toUs: number }

export interface FunctionTime { functionName: string, where: string, stage: Stage, selfUs: number }

/** The most a sample counts, in sampling intervals: one interval plus the jitter of the sampling thread. */
export const CAP_INTERVALS = 1.5

export interface Attribution {
  /** Non-idle time inside the window per stage, µs, each sample capped (see above). */
  stages: Map<Stage, number>
  /** Self time per function (name, file and line), with the stage of the stacks it was the leaf of most. */
  functions: Map<string, FunctionTime>
  busyUs: number
  /** Non-idle time without the cap: on the CPU or waiting for it. */
  wallUs: number
  idleUs: number
  /** Samples kept (inside the window, idle or not). */
  samples: number
}

export function emptyAttribution (): Attribution {
  return { stages: new Map(), functions: new Map(), busyUs: 0, wallUs: 0, idleUs: 0, samples: 0 }
}

/** Where a frame is, for the function table: the path under dist/ for Outbox's code, else the url's tail. */
function whereOf (f: CpuProfile['nodes'][number]['callFrame']): string {
  const file = outboxPath(f.url) ?? f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\//, '')
  return file === '' ? '(native)' : `${file}:${(f.lineNumber ?? 0) + 1}`
}

/**
 * Adds the samples of `profile` inside `window` (all of them when undefined) to `into`, and returns it. Each
 * node's stage is worked out once: every sample of a node has the same stack.
 */
export function attribute (profile: CpuProfile, window: Window | undefined, into: Attribution = emptyAttribution()): Attribution {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const stageById = new Map<number, Stage>()
  const stageFor = (id: number): Stage => {
    let s = stageById.get(id)
    if (s === undefined) {
      const stack: Frame[] = []
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!.callFrame)
      s = stageOf(stack)
      stageById.set(id, s)
    }
    return s
  }
  const deltas = profile.timeDeltas.filter((d) => d > 0).sort((x, y) => x - y)
  const capUs = CAP_INTERVALS * (deltas[Math.floor(deltas.length / 2)] ?? 1000)
  let t = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0
    if (window !== undefined && (t < window.fromUs || t >= window.toUs)) continue
    const next = i + 1 < profile.samples.length ? t + (profile.timeDeltas[i + 1] ?? 0) : profile.endTime
    // the sample's span, cut to the window; a negative delta (samples out of order) counts nothing
    const wall = Math.max(0, Math.min(next, window?.toUs ?? next) - t)
    const us = Math.min(wall, capUs)
    const node = byId.get(profile.samples[i]!)
    if (node === undefined) continue
    into.samples++
    if (node.callFrame.functionName === '(idle)') { into.idleUs += wall; continue }
    into.busyUs += us
    into.wallUs += wall
    const stage = stageFor(node.id)
    into.stages.set(stage, (into.stages.get(stage) ?? 0) + us)
    const where = whereOf(node.callFrame)
    const key = `${node.callFrame.functionName} ${where} ${stage}`
    const fn = into.functions.get(key)
    if (fn !== undefined) fn.selfUs += us
    else into.functions.set(key, { functionName: node.callFrame.functionName || '(anonymous)', where, stage, selfUs: us })
  }
  return into
}

/**
 * The functions with the most self time, the same function under several stages summed into its main stage (the
 * one it spent most time in).
 */
export function topFunctions (a: Attribution, n: number): FunctionTime[] {
  const merged = new Map<string, { total: number, best: FunctionTime }>()
  for (const f of a.functions.values()) {
    const key = `${f.functionName} ${f.where}`
    const m = merged.get(key)
    if (m === undefined) merged.set(key, { total: f.selfUs, best: f })
    else {
      m.total += f.selfUs
      if (f.selfUs > m.best.selfUs) m.best = f
    }
  }
  return [...merged.values()].map((m) => ({ ...m.best, selfUs: m.total })).sort((x, y) => y.selfUs - x.selfUs).slice(0, n)
}
