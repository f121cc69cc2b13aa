import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

let scenario: RelayScenario
before(async () => { ({ sink, ob, org, events } = scenario = await startRelayScenario()) })
after(async () => { await scenario.close() })

test('sandbox messages never reach SMTP; the local part decides the events', async () => {
  const msg = queuedMessage(org, {
    environment: 'test',
    to: [
      'anyone@dest.example', 'bounce@dest.example', 'softbounce@dest.example', 'complaint@dest.example', 'open@dest.example',
      'click+1@dest.example'
    ],
    html: '<p><a href="https://example.org/first">a</a> <a href="https://example.org/second">b</a></p>'
  })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'bounced').length === 2, 20_000)
  const seq = (rcpt: string): string[] => events.of(msg.id).filter((e) => e.data.to === rcpt).map((e) => e.type)
  assert.deepEqual(seq('anyone@dest.example'), ['delivered'])
  assert.deepEqual(seq('bounce@dest.example'), ['bounced'])
  assert.deepEqual(seq('softbounce@dest.example'), ['deferred', 'bounced'])
  assert.deepEqual(seq('complaint@dest.example'), ['delivered', 'complained'])
  assert.deepEqual(seq('open@dest.example'), ['delivered', 'opened'])
  assert.deepEqual(seq('click+1@dest.example'), ['delivered', 'clicked'])

  const get = (rcpt: string, type: string): Record<string, unknown> => events.of(msg.id, type).find((e) => e.data.to === rcpt)!.data
  assert.equal(get('bounce@dest.example', 'bounced').bounce_type, 'hard')
  assert.equal(get('softbounce@dest.example', 'bounced').bounce_type, 'soft')
  assert.equal(get('softbounce@dest.example', 'deferred').attempt, 1)
  assert.equal(get('complaint@dest.example', 'complained').feedback_type, 'abuse')
  assert.ok(typeof get('complaint@dest.example', 'complained').complained_at === 'string')
  const opened = get('open@dest.example', 'opened')
  assert.equal(opened.user_agent, 'Outbox-Sandbox')
  assert.equal(opened.ip_address, '127.0.0.1')
  assert.equal(get('click+1@dest.example', 'clicked').url, 'https://example.org/first')
  assert.deepEqual(get('anyone@dest.example', 'delivered').metadata, { user: 'u1' })
  // the sandbox simulates events, not list state
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'bounce@dest.example'), false)
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'complaint@dest.example'), false)
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'softbounce@dest.example'), false)
  assert.equal(sink.messages.length, 0)
  assert.equal(sink.rcptLog.length, 0)
})
