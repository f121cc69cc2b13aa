import { test } from 'node:test'
import assert from 'node:assert/strict'
import { MAX_LANE_ID_LENGTH, laneId, normalizeLane, parseLane } from '../../../stores/egress/mod.ts'
import { connKey, warmupKey, warmupPeriod } from '../../../stores/egress/keys.ts'

// Pure: lane ids and key names as every process computes them (no Redis).

test('a lane id is source|provider, lower-cased, and splits back at its first bar', () => {
  assert.equal(laneId('ip-a', 'google'), 'ip-a|google')
  assert.equal(laneId('host', 'site:MX1.Example.com'), 'host|site:mx1.example.com')
  assert.deepEqual(parseLane('host|site:mx1.example.com|x'), { source: 'host', provider: 'site:mx1.example.com|x' })
  assert.equal(connKey(laneId('ip-a', 'google')), 'ob:eg:conn:{ip-a|google}')
})

test('untrusted parts cannot break out of the hash tag or carry spaces and control characters', () => {
  const lane = normalizeLane('ip-a|site:evil}.example {x}\r\n\u00e9')
  assert.doesNotMatch(lane, /[{}\s]/)
  assert.match(lane, /^[\x21-\x7e]+$/)
  assert.equal(connKey(lane).split('{').length, 2)
})

test('a long lane id is capped, keeps its start, and stays distinct by a digest of the whole', () => {
  const a = laneId('ip-a', 'site:' + 'mx.example.com,'.repeat(40) + 'a')
  const b = laneId('ip-a', 'site:' + 'mx.example.com,'.repeat(40) + 'b')
  assert.equal(a.length, MAX_LANE_ID_LENGTH)
  assert.ok(a.startsWith('ip-a|site:mx.example.com,'))
  assert.notEqual(a, b)
  assert.equal(a, laneId('IP-A', 'site:' + 'MX.example.com,'.repeat(40) + 'A'), 'case does not matter')
})

test('warm-up counts fall in the UTC day and hour, and say how long until each ends', () => {
  const now = Date.UTC(2026, 10, 28, 23, 59, 59, 500)
  assert.deepEqual(warmupPeriod(now), { day: '20261128', hour: '2026112823', msToNextDay: 500, msToNextHour: 500 })
  const p = warmupPeriod(Date.UTC(2026, 0, 2, 3, 30))
  assert.deepEqual(p, { day: '20260102', hour: '2026010203', msToNextDay: (20 * 60 + 30) * 60_000, msToNextHour: 30 * 60_000 })
  assert.equal(warmupKey('ip-a|google', p.hour), 'ob:eg:wu:{ip-a|google}:2026010203')
})
