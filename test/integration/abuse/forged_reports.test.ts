import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import type { TestOrg } from '../../helpers/outbox.ts'
import { EventReader } from '../../helpers/events.ts'
import { addRoute } from '../../helpers/inbound.ts'
import { eventually } from '../../helpers/waiting.ts'
import { ReportScenario, arf, dsn } from '../../helpers/reports.ts'
import { newId } from '../../../protocol/mod.ts'

/**
 * Bounce and complaint reports can be mailed by anyone. A report acts only on a message of ours, of the
 * organisation that received the report, and only on the recipient the return path was issued for; everything
 * else is dropped, counted in outbox_inbound_reports_dropped_total and never suppresses.
 */
let s: ReportScenario
let victimOrg: TestOrg
let attacker: TestOrg
let events: EventReader
let attackerEvents: EventReader

before(async () => {
  s = await ReportScenario.start()
  victimOrg = await s.ob.org()
  attacker = await s.ob.org()
  events = await EventReader.open(s.ob.proc.nc, victimOrg.orgId)
  attackerEvents = await EventReader.open(s.ob.proc.nc, attacker.orgId)
})
after(async () => {
  events.close()
  attackerEvents.close()
  await s.close()
})

const acted = (reader: EventReader, messageId: string): number =>
  reader.events.filter((e) => e.message_id === messageId && (e.type === 'bounced' || e.type === 'complained')).length

/** Waits until the report was either acted on (the defect) or counted as dropped for `reason`. */
async function settled (reason: string, before: number, messageId: string, reader = events): Promise<void> {
  await eventually(async () => acted(reader, messageId) > 0 || await s.dropped(reason) > before, `a ${reason} drop`)
}

test('a DSN to bounces+<message id>-<sha256 of the victim> suppresses nobody and sends no event', async () => {
  const sent = await s.send(victimOrg, 'customer@remote.test')
  const victim = 'ceo@victim.test'
  const hash = createHash('sha256').update(victim).digest('hex').slice(0, 12)
  const forged = `bounces+${sent.id}-${hash}@bounces.${victimOrg.domain}`
  await s.deliver(forged, dsn({
    to: forged, recipient: victim, status: '5.1.1', diagnostic: '550 5.1.1 user unknown', originalId: sent.id, domain: victimOrg.domain
  }))
    .catch((err: { responseCode?: number }) => assert.equal(err.responseCode, 550, 'refused at RCPT: not a return path we issue'))
  await events.settle(800)
  assert.equal(acted(events, sent.id), 0)
  assert.equal(s.ob.proc.cp.isSuppressed(victimOrg.orgId, victim), false)
})

test('a return path whose tag was altered is dropped and counted, for a DSN and an ARF report', async () => {
  const rcpt = 'someone@remote.test'
  const sent = await s.send(victimOrg, rcpt)
  // Same message, same key id, another MAC: what guessing or editing a tag gives.
  const altered = sent.returnPath.replace(/-([0-9a-z]{4})([0-9a-z]{16})@/, (_m, kid: string, mac: string) => `-${kid}${mac.startsWith('0') ? '1' : '0'}${mac.slice(1)}@`)
  assert.notEqual(altered, sent.returnPath)
  const before = await s.dropped('forged_tag')
  await s.deliver(altered, dsn({
    to: altered, recipient: rcpt, status: '5.1.1', diagnostic: '550 5.1.1 user unknown', originalId: sent.id, domain: victimOrg.domain
  }))
  await s.deliver(altered, arf({ to: altered, recipient: rcpt, originalId: sent.id, domain: victimOrg.domain }))
  await eventually(async () => acted(events, sent.id) > 0 || await s.dropped('forged_tag') >= before + 2, 'two forged_tag drops')
  assert.equal(acted(events, sent.id), 0)
  assert.equal(s.ob.proc.cp.isSuppressed(victimOrg.orgId, rcpt), false)
  assert.equal(await s.dropped('forged_tag'), before + 2)
})

test('a genuine return path with a report naming another recipient acts on nobody', async () => {
  const sent = await s.send(victimOrg, 'real@remote.test')
  const victim = 'bystander@remote.test'
  const before = await s.dropped('recipient_mismatch')
  await s.deliver(sent.returnPath, dsn({
    to: sent.returnPath, recipient: victim, status: '5.1.1', diagnostic: '550 5.1.1 unknown', originalId: sent.id, domain: victimOrg.domain
  }))
  await settled('recipient_mismatch', before, sent.id)
  await s.deliver(sent.returnPath, arf({ to: sent.returnPath, recipient: victim, originalId: sent.id, domain: victimOrg.domain }))
  await eventually(async () => acted(events, sent.id) > 0 || await s.dropped('recipient_mismatch') >= before + 2,
    'two recipient_mismatch drops')
  assert.equal(acted(events, sent.id), 0)
  for (const a of [victim, 'real@remote.test']) assert.equal(s.ob.proc.cp.isSuppressed(victimOrg.orgId, a), false, a)
  assert.equal(await s.dropped('recipient_mismatch'), before + 2)
})

test('the attacker\'s own genuine tag, moved to another organisation\'s bounce domain, does nothing there', async () => {
  // The attacker mails the victim address itself, so it holds a tag that verifies for that address...
  const victim = 'target@remote.test'
  const own = await s.send(attacker, victim)
  // ...and sends a bounce for it to the other organisation's return-path domain.
  const moved = own.returnPath.replace(/@bounces\..*$/, `@bounces.${victimOrg.domain}`)
  const before = await s.dropped('other_organisation')
  await s.deliver(moved, dsn({
    to: moved, recipient: victim, status: '5.1.1', diagnostic: '550 5.1.1 unknown', originalId: own.id, domain: victimOrg.domain
  }))
  await settled('other_organisation', before, own.id)
  assert.equal(acted(events, own.id), 0, 'no event for the organisation that owns the bounce domain')
  assert.equal(acted(attackerEvents, own.id), 0, 'nor for the sender')
  assert.equal(s.ob.proc.cp.isSuppressed(victimOrg.orgId, victim), false)
  assert.equal(await s.dropped('other_organisation'), before + 1)
})

test('a report through a route acts only on a message of that organisation and one of its recipients', async () => {
  await addRoute(s.ob, victimOrg, `fbl@${victimOrg.domain}`, false)
  const fbl = `fbl@${victimOrg.domain}`
  const sent = await s.send(victimOrg, 'reader@remote.test')
  const theirs = await s.send(attacker, 'reader2@remote.test')
  const cases: Array<{ reason: string, recipient: string, originalId: string, messageDomain: string }> = [
    // A Message-ID of our shape that no message has.
    { reason: 'unknown_message', recipient: 'made-up@remote.test', originalId: newId('msg'), messageDomain: victimOrg.domain },
    // A real message of the organisation, a recipient it was never sent to.
    { reason: 'recipient_mismatch', recipient: 'bystander@remote.test', originalId: sent.id, messageDomain: victimOrg.domain },
    // Another organisation's message, dressed in this organisation's domain.
    { reason: 'other_organisation', recipient: 'reader2@remote.test', originalId: theirs.id, messageDomain: victimOrg.domain },
    // Not one of ours at all.
    { reason: 'not_our_message', recipient: 'reader@remote.test', originalId: 'CAF1234', messageDomain: 'mail.gmail.com' }
  ]
  for (const c of cases) {
    const before = await s.dropped(c.reason)
    await s.deliver(fbl, arf({ to: fbl, recipient: c.recipient, originalId: c.originalId, domain: c.messageDomain }))
    await eventually(async () => events.of('complained').length > 0 || await s.dropped(c.reason) > before, `a ${c.reason} drop`)
    assert.equal(events.of('complained').length, 0, c.reason)
    assert.equal(s.ob.proc.cp.isSuppressed(victimOrg.orgId, c.recipient), false, c.reason)
    assert.equal(await s.dropped(c.reason), before + 1, c.reason)
  }
  // Each report still reached the route as inbound mail.
  await events.waitFor('inbound.received', cases.length)
})

/** An ARF report whose copy of the original carries `originalHeaders` (as a mailbox provider attaches the copy it got). */
function arfWithOriginal (r: { to: string, recipient: string, originalHeaders: string[] }): string {
  return [
    'From: feedback@isp.test', `To: ${r.to}`, 'Subject: FW: Hello', 'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="=_f"', '',
    '--=_f', 'Content-Type: text/plain', '', 'This is an email abuse report.', '',
    '--=_f', 'Content-Type: message/feedback-report', '',
    'Feedback-Type: abuse', 'User-Agent: ISP-FBL/1.0', 'Version: 1', `Original-Rcpt-To: ${r.recipient}`, '',
    '--=_f', 'Content-Type: message/rfc822', '', ...r.originalHeaders, '', 'Hi there', '',
    '--=_f--', ''
  ].join('\r\n')
}

test('through a route, one recipient of a message cannot report a co-recipient; the recipient its copy proves is acted on', async () => {
  const abuse = `abuse@${victimOrg.domain}`
  await addRoute(s.ob, victimOrg, abuse, false)
  const [alice, bob] = ['alice@remote.test', 'bob@remote.test']
  const sent = await s.ob.request('POST', '/v1/messages/send', {
    key: victimOrg.adminKey,
    body: {
      from: `news@${victimOrg.domain}`, to: [alice, bob], subject: 'Hello', text: 'Hi there', track_opens: false, track_clicks: false
    }
  })
  assert.equal(sent.status, 202)
  const id = sent.body.id as string
  await eventually(() => s.sink.to(alice).length > 0 && s.sink.to(bob).length > 0, 'both copies')
  const copyOf = (rcpt: string): string[] => {
    const m = s.sink.to(rcpt).find((x) => x.messageId === `<${id}@${victimOrg.domain}>`)!
    return [`Return-Path: <${m.mailFrom}>`, `From: ${m.headers.get('from')!}`, `To: ${m.headers.get('to')!}`,
      `Message-ID: ${m.messageId}`, `List-Unsubscribe: ${m.headers.get('list-unsubscribe')!}`, 'Subject: Hello']
  }
  const bare = [`From: news@${victimOrg.domain}`, `To: ${alice}, ${bob}`, `Message-ID: <${id}@${victimOrg.domain}>`, 'Subject: Hello']

  // Bob forwards his own copy, or just the Message-ID, as a complaint about Alice.
  const before = await s.dropped('recipient_mismatch')
  await s.deliver(abuse, arfWithOriginal({ to: abuse, recipient: alice, originalHeaders: copyOf(bob) }))
  await eventually(async () => acted(events, id) > 0 || await s.dropped('recipient_mismatch') >= before + 1, 'a recipient_mismatch drop')
  await s.deliver(abuse, arfWithOriginal({ to: abuse, recipient: alice, originalHeaders: bare }))
  await eventually(async () => acted(events, id) > 0 || await s.dropped('recipient_mismatch') >= before + 2, 'two recipient_mismatch drops')
  assert.equal(acted(events, id), 0)
  assert.equal(s.ob.proc.cp.isSuppressed(victimOrg.orgId, alice), false, 'Alice is not suppressed by a co-recipient')
  assert.equal(await s.dropped('recipient_mismatch'), before + 2)

  // A provider's genuine report about Bob's copy (its Return-Path and List-Unsubscribe are Bob's) acts on Bob.
  await s.deliver(abuse, arfWithOriginal({ to: abuse, recipient: bob, originalHeaders: copyOf(bob) }))
  await eventually(() => acted(events, id) > 0, 'the complaint about Bob')
  const complaint = events.of('complained').find((e) => e.message_id === id)!
  assert.equal((complaint.data as { to: string }).to, bob)
  assert.equal(s.ob.proc.cp.isSuppressed(victimOrg.orgId, bob), true)
  assert.equal(s.ob.proc.cp.isSuppressed(victimOrg.orgId, alice), false)
})
