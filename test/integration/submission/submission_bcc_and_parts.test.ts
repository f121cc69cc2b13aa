import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { EventWatcher } from '../../helpers/engine_env.ts'
import { queuedId, startSubmissionScenario, submissionClient, type SubmissionScenario } from '../../helpers/submission.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * What SMTP submission sends is what every recipient may see: a Bcc header written by the application is removed
 * (RFC 5322 3.6.3) while its addresses, given as RCPT, still receive the message; and a message is refused at
 * submission when it has more MIME parts than its content view could ever be read with.
 */
let s: SubmissionScenario
let events: EventWatcher
before(async () => {
  s = await startSubmissionScenario()
  events = await EventWatcher.start(s.ob.proc.nc, s.org.orgId)
})
after(async () => {
  events.stop()
  await s.close()
})

test('a Bcc header written by the application reaches no recipient, and every RCPT still gets the message', async () => {
  const key = await s.ob.key(s.org, ['send'])
  const client = submissionClient(s.port, key)
  const rcpts = ['shown@dest.example', 'hidden1@dest.example', 'hidden2@dest.example']
  const raw = [
    `From: app@${s.org.domain}`, 'To: shown@dest.example', 'Bcc: hidden1@dest.example,', ' hidden2@dest.example',
    'Resent-Bcc: hidden2@dest.example', 'Subject: blind copies', '', 'body', ''
  ].join('\r\n')
  const info = await client.sendMail({ envelope: { from: `app@${s.org.domain}`, to: rcpts }, raw })
  client.close()
  const id = queuedId(info.response)
  await events.until(() => events.of(id, 'delivered').length === 3)
  for (const rcpt of rcpts) {
    const got = s.sink.to(rcpt)
    assert.equal(got.length, 1, rcpt)
    const text = got[0]!.raw.toString('utf8')
    const head = text.slice(0, text.indexOf('\r\n\r\n'))
    assert.doesNotMatch(head, /^(Resent-)?Bcc:/im, `${rcpt} sees no Bcc header`)
    assert.doesNotMatch(text, /hidden[12]@dest\.example/, `${rcpt} sees no blind-copy address`)
    assert.match(head, /^To: shown@dest\.example$/m)
  }
})

/** A multipart/mixed message of `children` text parts (children + 1 MIME parts with the message itself). */
function multipart (from: string, to: string, children: number): string {
  const lines = [
    `From: ${from}`, `To: ${to}`, 'Subject: many parts', 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="b"', ''
  ]
  for (let i = 0; i < children; i++) lines.push('--b', 'Content-Type: text/plain', '', `part ${i}`)
  lines.push('--b--', '')
  return lines.join('\r\n')
}

test('a message of more than 1000 MIME parts is refused 554 5.6.0 at submission; ' +
  'one of 1000 is sent and its content recorded', async () => {
  const key = await s.ob.key(s.org, ['send'])
  const client = submissionClient(s.port, key)
  const from = `app@${s.org.domain}`
  let refused: { responseCode?: number, response?: string } | undefined
  try {
    await client.sendMail({ envelope: { from, to: ['many@dest.example'] }, raw: multipart(from, 'many@dest.example', 1000) })
  } catch (err) {
    refused = err as typeof refused
  }
  assert.equal(refused?.responseCode, 554, 'refused, not queued with content that can never be recorded')
  assert.match(refused.response!, /^554 5\.6\.0 .*more than 1000 MIME parts/)

  const info = await client.sendMail({ envelope: { from, to: ['fewer@dest.example'] }, raw: multipart(from, 'fewer@dest.example', 999) })
  client.close()
  const id = queuedId(info.response)
  await events.until(() => events.of(id, 'delivered').length === 1)
  const readKey = await s.ob.key(s.org, ['read'])
  await eventually(async () => (await s.ob.request('GET', `/v1/messages/${id}/content`, { key: readKey })).status === 200,
    'the content of the 1000-part message')
  assert.equal(s.sink.to('many@dest.example').length, 0)
})
