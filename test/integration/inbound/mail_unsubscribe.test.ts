import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOrg } from '../../helpers/outbox.ts'
import { EventReader } from '../../helpers/events.ts'
import { eventually } from '../../helpers/waiting.ts'
import { ReportScenario } from '../../helpers/reports.ts'
import { suppressionKey } from '../../../stores/control_plane/mod.ts'

/** The `mailto:` of List-Unsubscribe is the message's return path; a mail client sends `Subject: unsubscribe` to it. */
let s: ReportScenario
let org: TestOrg
let events: EventReader

before(async () => {
  s = await ReportScenario.start()
  org = await s.ob.org()
  events = await EventReader.open(s.ob.proc.nc, org.orgId)
})
after(async () => {
  events.close()
  await s.close()
})

const request = (to: string, subject = 'unsubscribe', extra: string[] = []): string =>
  ['From: reader@remote.test', `To: ${to}`, `Subject: ${subject}`, ...extra, '', 'Sent from my mail client', ''].join('\r\n')

test('a mail to the List-Unsubscribe mailto address unsubscribes that recipient', async () => {
  const sent = await s.send(org, 'Reader@Remote.test')
  assert.equal(sent.unsubscribeMailto, sent.returnPath, 'the mailto is the return path')
  await s.deliver(sent.unsubscribeMailto, request(sent.unsubscribeMailto))
  const [e] = await events.waitFor('unsubscribed')
  const d = e!.data as any
  assert.equal(e!.message_id, sent.id)
  assert.deepEqual({ message_id: d.message_id, to: d.to, method: d.method },
    { message_id: sent.id, to: 'reader@remote.test', method: 'mailto' })
  assert.ok(!Number.isNaN(Date.parse(d.unsubscribed_at)))
  const sup = s.ob.proc.cp.suppressions.get(suppressionKey(org.orgId, 'reader@remote.test'))
  assert.equal(sup?.reason, 'unsubscribe')
  assert.equal(sup?.message_id, sent.id)
})

test('an altered address, an automatic reply and another subject unsubscribe nobody', async () => {
  const sent = await s.send(org, 'keep@remote.test')
  const altered = sent.returnPath.replace(/-([0-9a-z]{4})([0-9a-z]{16})@/, (_m, kid: string, mac: string) => `-${kid}${mac.startsWith('0') ? '1' : '0'}${mac.slice(1)}@`)
  const before = await s.dropped('forged_tag')
  await s.deliver(altered, request(altered))
  await eventually(async () => events.of('unsubscribed').some((e) => e.message_id === sent.id) || await s.dropped('forged_tag') > before,
    'a forged_tag drop')
  await s.deliver(sent.returnPath, request(sent.returnPath, 'unsubscribe', ['Auto-Submitted: auto-replied']))
  await s.deliver(sent.returnPath, request(sent.returnPath, 'Out of office: Hello'))
  // A genuine request for another message after them: once it is processed, the three before it were too.
  const marker = await s.send(org, 'marker@remote.test')
  await s.deliver(marker.returnPath, request(marker.returnPath, 'Unsubscribe'))
  await eventually(() => events.of('unsubscribed').some((e) => e.message_id === marker.id), 'the marker unsubscribe')
  assert.equal(events.of('unsubscribed').filter((e) => e.message_id === sent.id).length, 0)
  assert.equal(s.ob.proc.cp.isSuppressed(org.orgId, 'keep@remote.test'), false)
  assert.equal(await s.dropped('forged_tag'), before + 1)
})
