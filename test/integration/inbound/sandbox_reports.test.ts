import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOrg } from '../../helpers/outbox.ts'
import { EventReader } from '../../helpers/events.ts'
import { addRoute } from '../../helpers/inbound.ts'
import { ReportScenario, arf, dsn } from '../../helpers/reports.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * Sandbox mail is never sent, so a report about a sandbox message is one the organisation mailed itself (testing its
 * bounce handling through a route). It leads to sandbox events, listed only with ?environment=test, and never
 * suppresses: the sandbox's outcomes leave the live suppression list alone.
 */
let s: ReportScenario
let org: TestOrg
let sandboxKey: string
let events: EventReader
const fbl = (o: TestOrg): string => `fbl@${o.domain}`

before(async () => {
  s = await ReportScenario.start()
  org = await s.ob.org()
  sandboxKey = await s.ob.key(org, ['send', 'read'], 'test')
  await addRoute(s.ob, org, fbl(org), false)
  events = await EventReader.open(s.ob.proc.nc, org.orgId)
})
after(async () => {
  events.close()
  await s.close()
})

async function sendSandbox (to: string): Promise<string> {
  const r = await s.ob.request('POST', '/v1/messages/send', {
    key: sandboxKey, body: { from: `news@${org.domain}`, to, subject: 'Hello', text: 'Hi there' }
  })
  assert.equal(r.status, 202, r.text)
  const id = r.body.id as string
  await eventually(async () => (await s.ob.request('GET', `/v1/messages/${id}`, { key: sandboxKey })).status === 200,
    'the sandbox message recorded')
  return id
}

const about = (type: string, id: string): Array<{ environment?: string, data: Record<string, unknown> }> =>
  events.of(type).filter((e) => e.message_id === id) as unknown as Array<{ environment?: string, data: Record<string, unknown> }>

/** Ids of the messages with an event of `type` in the organisation's `environment` listing. */
async function listed (environment: string, type: string): Promise<string[]> {
  const r = await s.ob.request('GET', `/v1/events?environment=${environment}&type=${type}`, { key: org.adminKey })
  assert.equal(r.status, 200, r.text)
  return (r.body.data as Array<{ data: { message_id: string } }>).map((e) => e.data.message_id)
}

test('a bounce and a complaint about a sandbox message are sandbox events and suppress nobody', async () => {
  const bounced = 'gone@remote.test'
  const complained = 'annoyed@remote.test'
  const first = await sendSandbox(bounced)
  const second = await sendSandbox(complained)
  await s.deliver(fbl(org), dsn({
    to: fbl(org), recipient: bounced, status: '5.1.1', diagnostic: '550 5.1.1 user unknown', originalId: first, domain: org.domain
  }))
  await s.deliver(fbl(org), arf({ to: fbl(org), recipient: complained, originalId: second, domain: org.domain }))
  await eventually(() => about('bounced', first).length > 0 && about('complained', second).length > 0, 'the report events')

  const [bounce] = about('bounced', first)
  const [complaint] = about('complained', second)
  assert.equal(bounce!.environment, 'test')
  assert.equal(bounce!.data.bounce_type, 'hard')
  assert.equal(complaint!.environment, 'test')
  assert.equal(s.ob.proc.cp.isSuppressed(org.orgId, bounced), false, 'a hard bounce in the sandbox suppresses nobody')
  assert.equal(s.ob.proc.cp.isSuppressed(org.orgId, complained), false, 'nor does a complaint')

  await eventually(async () => (await listed('test', 'bounced')).includes(first) && (await listed('test', 'complained')).includes(second),
    'listed in the sandbox')
  assert.deepEqual(await listed('live', 'bounced'), [], 'not in the live events')
  assert.deepEqual(await listed('live', 'complained'), [], 'not in the live events')
})

test('the same reports about a live message still suppress (the control)', async () => {
  const rcpt = 'live-annoyed@remote.test'
  const sent = await s.send(org, rcpt)
  await s.deliver(fbl(org), arf({ to: fbl(org), recipient: rcpt, originalId: sent.id, domain: org.domain }))
  await eventually(() => about('complained', sent.id).length > 0, 'the complaint')
  assert.equal(about('complained', sent.id)[0]!.environment, undefined, 'a live event carries no environment mark')
  await eventually(() => s.ob.proc.cp.isSuppressed(org.orgId, rcpt), 'the live recipient suppressed')
})
