/** Counters of one stats bucket, as GET /v1/stats returns them. */
export interface Counts { delivered: number, bounced: number, opened: number, clicked: number, complained: number }

export const RATE_NAMES = ['bounce', 'complaint', 'open', 'click'] as const
export type RateName = typeof RATE_NAMES[number]

/**
 * Rates in percent, each over the messages it can happen to: bounces over delivered plus bounced (every final
 * outcome), complaints, opens and clicks over delivered. Undefined when nothing reached a final outcome.
 */
export function rates (c: Counts): Record<RateName, number | undefined> {
  const pct = (n: number, of: number): number | undefined => of === 0 ? undefined : Math.round((n / of) * 1000) / 10
  return {
    bounce: pct(c.bounced, c.delivered + c.bounced),
    complaint: pct(c.complained, c.delivered),
    open: pct(c.opened, c.delivered),
    click: pct(c.clicked, c.delivered)
  }
}
