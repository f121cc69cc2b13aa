import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DAY_LABEL_PX, MIXED_LABEL_PX, niceStep, timeTicks, valueTicks } from '../../dashboard/src/chart_scale.ts'

test('value ticks run from 0 to a round top in steps of 1, 2 or 5 × 10^n', () => {
  assert.deepEqual(valueTicks(0), [0, 1])
  assert.deepEqual(valueTicks(3), [0, 1, 2, 3])
  assert.deepEqual(valueTicks(7), [0, 2, 4, 6, 8])
  assert.deepEqual(valueTicks(25), [0, 10, 20, 30])
  assert.deepEqual(valueTicks(100), [0, 50, 100])
  assert.deepEqual(valueTicks(1234), [0, 500, 1000, 1500])
  for (let max = 1; max < 100_000; max = Math.ceil(max * 1.37)) {
    const ticks = valueTicks(max)
    const step = ticks[1]! - ticks[0]!
    assert.match(String(step), /^[125]0*$/, `step ${step} for ${max}`)
    assert.ok(ticks.at(-1)! >= max && ticks.length <= 6, `${ticks.join(',')} for ${max}`)
  }
  assert.equal(niceStep(0.3), 1)
})

test('time ticks keep the room of their labels at every width, on round local hours or midnights', () => {
  const HOUR = 3_600_000
  const first = Math.floor(Date.UTC(2026, 10, 20, 5) / HOUR) * HOUR
  for (const hours of [24, 72, 168]) {
    const starts = Array.from({ length: hours }, (_, i) => first + i * HOUR)
    for (const width of [300, 340, 760, 1000]) {
      const slot = width / hours
      const ticks = timeTicks(starts, slot)
      assert.ok(ticks.length >= 2, `${hours} h at ${width} px: ${ticks.length} ticks`)
      for (let i = 1; i < ticks.length; i++) {
        // every range of a day or more holds a midnight, whose time label says its date too
        const room = ticks[i]!.kind === 'day' ? DAY_LABEL_PX : MIXED_LABEL_PX
        assert.ok((ticks[i]!.index - ticks[i - 1]!.index) * slot >= room, `${hours} h at ${width} px`)
      }
      for (const t of ticks) {
        const d = new Date(starts[t.index]!)
        if (t.kind === 'day') assert.equal(d.getHours(), 0)
        else assert.equal(d.getHours() % ((ticks[1]!.index - ticks[0]!.index) % 24 || 24), 0)
      }
    }
  }
})

test('a chart of time labels has a dated midnight among them, whatever hour its range starts at', () => {
  const HOUR = 3_600_000
  const midnight = Date.UTC(2026, 10, 20) + new Date(Date.UTC(2026, 10, 20)).getTimezoneOffset() * 60_000
  for (let offset = 0; offset < 24; offset++) {
    for (const hours of [24, 72, 168]) {
      const starts = Array.from({ length: hours }, (_, i) => midnight + (offset + i) * HOUR)
      // the drawing widths of the dashboard's phone and desktop layouts
      for (const width of [300, 330, 350, 760, 1200]) {
        const ticks = timeTicks(starts, width / hours)
        if (ticks[0]!.kind === 'day') continue
        const dated = ticks.filter((t) => new Date(starts[t.index]!).getHours() === 0)
        assert.ok(dated.length >= 1, `${hours} h from hour ${offset} at ${width} px: no midnight among the ticks`)
        for (let i = 1; i < ticks.length; i++) {
          const apart = (ticks[i]!.index - ticks[i - 1]!.index) * (width / hours)
          assert.ok(apart >= MIXED_LABEL_PX, `${hours} h from hour ${offset} at ${width} px: labels ${apart} px apart`)
        }
      }
    }
  }
})
