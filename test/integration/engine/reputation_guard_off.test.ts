import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { EventWatcher } from '../../helpers/engine_env.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'

/**
 * `OB_REPUTATION_GUARD=off` (docs/reputation.md): the bounce flood that pauses a stream with the guard on pauses
 * nothing here; sends go on, and GET /v1/reputation still shows the counts and rates. A pause already in place (left
 * from when the guard was on) stays until resumed.
 *
 * The same low thresholds as reputation_guard.test.ts: with the guard on, 50 % hard bounces from 4 sends on pause.
 */
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

before(async () => {
  sink = await SmtpSink.start({ keepRaw: false })
  ob = await TestOutbox.start({
    env: {
      OB_SMTP_RELAY: sink.url,
      OB_REPUTATION_GUARD: 'off',
      OB_REPUTATION_MIN_VOLUME: '4',
      OB_REPUTATION_MAX_BOUNCE_PCT: '50',
      OB_REPUTATION_MAX_COMPLAINT_PCT: '20'
    }
  })
  org = await ob.org()
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events?.stop()
  await ob?.close()
  await sink?.close()
})

const send = async (o: TestOrg, to: string | string[]) => await ob.request('POST', '/v1/messages/send', {
  key: o.adminKey, body: { from: `news@${o.domain}`, to, subject: 'Hello', text: 'Hi there', track_opens: false, track_clicks: false }
})
const reputation = async (o: TestOrg) => (await ob.request('GET', '/v1/reputation', { key: o.adminKey })).body
const transactional = async (o: TestOrg) => (await reputation(o)).streams.find((s: { stream: string }) => s.stream === 'transactional')

test('a bounce flood past the threshold pauses nothing: sends are taken, the rates are counted and shown', async () => {
  const flood = [['ok1@remote.test', 'ok2@remote.test', 'permfail1@remote.test', 'permfail2@remote.test'],
    ['permfail3@remote.test', 'permfail4@remote.test', 'permfail5@remote.test', 'permfail6@remote.test']]
  for (const to of flood) {
    const r = await send(org, to)
    assert.equal(r.status, 202, 'the stream still takes sends')
  }
  const counted = await eventually(async () => {
    const s = await transactional(org)
    return s.counts.delivered + s.counts.hard_bounced === 8 ? s : undefined
  }, 'the window to hold all eight outcomes')
  assert.deepEqual(counted.counts, { delivered: 2, hard_bounced: 6, complained: 0 })
  assert.deepEqual(counted.rates, { volume: 8, bounce_rate: 0.75, complaint_rate: 0 })

  // The guard on would have paused at the fourth outcome; give a pause that should not come the time to show.
  await nothingHappensFor(1000)
  const rep = await reputation(org)
  assert.equal(rep.guard, 'off')
  assert.deepEqual(rep.thresholds, { complaint_rate: 0.2, bounce_rate: 0.5, min_volume: 4 })
  const s = rep.streams.find((x: { stream: string }) => x.stream === 'transactional')
  assert.equal(s.status, 'active')
  assert.equal(s.paused, undefined)
  assert.deepEqual(events.events.filter((e) => e.type === 'stream.paused'), [], 'no stream.paused event')
  assert.equal((await send(org, 'ok3@remote.test')).status, 202)
  const batch = await ob.request('POST', '/v1/messages/batch', {
    key: org.adminKey, body: { messages: [{ from: `news@${org.domain}`, to: 'ok4@remote.test', subject: 'S', text: 'T' }] }
  })
  assert.equal(batch.status, 202)
  const metrics = (await ob.request('GET', '/metrics')).text
  assert.doesNotMatch(metrics, new RegExp(`^outbox_stream_paused\\{organization="${org.orgId}"`, 'm'))
  assert.match(metrics, new RegExp(`^outbox_reputation_bounce_rate\\{organization="${org.orgId}",stream="transactional"\\} 0\\.75$`, 'm'))
})

test('a pause from when the guard was on stays until an admin resumes the stream', async () => {
  const other = await ob.org()
  const counts = { delivered: 2, hard_bounced: 2, complained: 0 }
  const pausedAt = new Date().toISOString()
  // as the guard left it before it was switched off
  assert.ok(await ob.proc.cp.pauses.pause({
    kind: 'stream_pause', org_id: other.orgId, stream: 'transactional', reason: 'bounce_rate', paused_at: pausedAt, counts,
    rates: { volume: 4, bounce_rate: 0.5, complaint_rate: 0 }
  }))
  const refused = await send(other, 'someone@remote.test')
  assert.equal(refused.status, 423)
  assert.equal(refused.body.error.code, 'stream_paused')
  assert.equal((await transactional(other)).status, 'paused')
  const r = await ob.request('POST', '/v1/reputation/streams/transactional/resume', { key: other.adminKey })
  assert.equal(r.status, 200)
  assert.equal(r.body.paused_at, pausedAt)
  assert.equal((await send(other, 'someone@remote.test')).status, 202)
  assert.equal((await transactional(other)).status, 'active')
})
