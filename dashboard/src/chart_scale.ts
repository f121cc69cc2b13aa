/**
 * The scales of the dashboard's charts, pure so that they can be read (and tested) apart from the drawing: round
 * value ticks, and time ticks spaced for the width the chart has.
 */

/** The smallest of 1, 2 or 5 × 10^n that is at least `raw` (and at least 1: counts and percents need no finer step). */
export function niceStep (raw: number): number {
  if (!(raw > 1)) return 1
  const p = 10 ** Math.floor(Math.log10(raw))
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw - 1e-9)!
}

/** Value ticks from 0 to a round top at or above `max`, about `count` steps of 1, 2 or 5 × 10^n. */
export function valueTicks (max: number, count = 4): number[] {
  const step = niceStep(max / count)
  const top = Math.max(step, Math.ceil(max / step - 1e-9) * step)
  const ticks: number[] = []
  for (let v = 0; v <= top + 1e-9; v += step) ticks.push(Math.round(v))
  return ticks
}

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
/** Hours between labelled ticks, smallest first; 24 and more label days (at local midnight). */
const TICK_HOURS = [1, 2, 3, 6, 12, 24, 48, 72, 168]
/** Room a label needs, in CSS pixels at the axis's 11 px font: a time ("14:00"), a day ("Sun, Nov 29"). */
export const TIME_LABEL_PX = 48
export const DAY_LABEL_PX = 84
/** Between a time label and a dated midnight label, centred on their ticks: half of each. */
export const MIXED_LABEL_PX = (TIME_LABEL_PX + DAY_LABEL_PX) / 2

/** Local midnight-based numbering: day n of the epoch in the browser's time zone, and the local hour of `ms`. */
function local (ms: number): { day: number, hour: number } {
  const offset = new Date(ms).getTimezoneOffset() * 60_000
  const t = ms - offset
  return { day: Math.floor(t / DAY_MS), hour: Math.floor((t % DAY_MS) / HOUR_MS) }
}

export interface TimeTick {
  /** Index of the hourly slot the tick stands under. */
  index: number
  /** `time`: a time of day (a date line is added at midnight); `day`: a date only. */
  kind: 'time' | 'day'
}

/**
 * Which hourly slots get a label when each slot is `slotPx` wide: the smallest spacing from TICK_HOURS whose labels
 * keep their room, on round local hours (00:00, 06:00, …) or, from 24 hours up, on local midnights.
 */
export function timeTicks (starts: number[], slotPx: number): TimeTick[] {
  // A midnight's time label also says its date, so it needs the room of both beside its neighbours; without it the
  // drawing drops the dated labels that touch a time, and a chart could show "12:00" three times and no date.
  const timeRoom = starts.some(isMidnight) ? MIXED_LABEL_PX : TIME_LABEL_PX
  const hours = TICK_HOURS.find((n) => n * slotPx >= (n < 24 ? timeRoom : DAY_LABEL_PX)) ?? TICK_HOURS.at(-1)!
  const ticks: TimeTick[] = []
  starts.forEach((ms, index) => {
    const { day, hour } = local(ms)
    if (hours < 24 ? hour % hours === 0 : hour === 0 && day % (hours / 24) === 0) ticks.push({ index, kind: hours < 24 ? 'time' : 'day' })
  })
  return ticks
}

/** Whether a `time` tick starts a local day (its label then also says the date). */
export function isMidnight (ms: number): boolean {
  return local(ms).hour === 0
}
