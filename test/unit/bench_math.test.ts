import { test } from 'node:test'
import assert from 'node:assert/strict'
import { expectedAllowed, judgeKey, weightedSchedule, type KeyTally } from '../../bench/ratelimit_stats.ts'
import { niceMax, renderChart } from '../../bench/svg_chart.ts'

function tally (allowed: number, sent: number, seconds: number, limit = 60): KeyTally {
  return {
    plan: 'free', limit, sent, allowed, limited: sent - allowed, badRetry: 0, badLimitHeader: 0, other: 0,
    firstAt: 1_000, lastAt: 1_000 + seconds * 1000
  }
}

test('GCRA allowance: the burst at once, then the limit per minute', () => {
  assert.equal(expectedAllowed(60, 0), 60)
  assert.equal(expectedAllowed(60, 60), 120)
  assert.equal(expectedAllowed(1000, 75), 2250)
})

test('keys over their plan fail, short ones are starved only when driven hard enough', () => {
  assert.equal(judgeKey(tally(135, 600, 75)).verdict, 'ok')
  assert.equal(judgeKey(tally(140, 600, 75)).verdict, 'over')
  assert.equal(judgeKey(tally(125, 600, 75)).verdict, 'starved')
  assert.equal(judgeKey(tally(125, 130, 75)).verdict, 'underdriven')
  assert.equal(Math.round(judgeKey(tally(2250, 9000, 75, 1000)).steadyPerMinute), 1000)
})

test('the weighted schedule spreads each key evenly by weight', () => {
  const s = weightedSchedule([1, 5, 17])
  assert.equal(s.length, 23)
  assert.deepEqual([0, 1, 2].map((k) => s.filter((x) => x === k).length), [1, 5, 17])
  assert.ok(s.slice(0, 4).includes(2), 'the heaviest key comes early, not in one block at the end')
})

test('charts are standalone SVG with escaped labels', () => {
  assert.equal(niceMax(0), 1)
  assert.equal(niceMax(730), 1000)
  assert.equal(niceMax(2100), 2500)
  const svg = renderChart({
    title: 'a < b', kind: 'line', xLabel: 'x', yLabel: 'y', x: [1, 2, 4], series: [{ name: 'p50', values: [1, 2, 3] }]
  })
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
  assert.match(svg, /a &lt; b/)
  assert.match(svg, /<polyline/)
  const bars = renderChart({
    title: 't', kind: 'bar', xLabel: 'plan', yLabel: 'rpm', x: ['free', 'pro'],
    series: [{ name: 'limit', values: [60, 1000] }, { name: 'measured', values: [59, 998] }]
  })
  assert.equal(bars.match(/<rect x=/g)?.length, 4 + 2, 'four bars and two legend swatches')
})
