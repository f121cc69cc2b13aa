import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { RawSmtp } from '../../helpers/raw_smtp.ts'
import { sleep } from '../../helpers/webhooks.ts'
import { dkimResult, startSubmissionScenario, type SubmissionScenario } from '../../helpers/submission.ts'
import { eventually } from '../../helpers/waiting.ts'

// AUTH without STARTTLS (OB_SMTP_SUBMISSION_INSECURE_AUTH) so that raw sockets can send what no client library would.
let s: SubmissionScenario
let key: string
before(async () => {
  s = await startSubmissionScenario({
    OB_SMTP_SUBMISSION_INSECURE_AUTH: 'true', OB_SMTP_SUBMISSION_IDLE_TIMEOUT_MS: '1500',
    OB_SMTP_SUBMISSION_MAX_CONNECTIONS_PER_ADDRESS: '6'
  })
  key = await s.ob.key(s.org, ['send'])
})
after(async () => { await s.close() })

async function session (): Promise<RawSmtp> {
  const c = await RawSmtp.open(s.port)
  await c.command('EHLO client.test')
  assert.match(await c.command(`AUTH PLAIN ${Buffer.from(`\0apikey\0${key}`).toString('base64')}`), /^235 /)
  return c
}

/** MAIL, RCPT, DATA, then `data` as given (the caller writes its own end) and the reply to it. */
async function transaction (c: RawSmtp, rcpt: string, data: string, mailArgs = ''): Promise<string> {
  assert.match(await c.command(`MAIL FROM:<app@${s.org.domain}>${mailArgs}`), /^250 /)
  assert.match(await c.command(`RCPT TO:<${rcpt}>`), /^250 /)
  assert.match(await c.command('DATA'), /^354 /)
  c.write(data)
  return await c.reply()
}

test('bare LF line ends are made CRLF; the message is otherwise sent as written and its signature verifies', async () => {
  const c = await session()
  const reply = await transaction(c, 'lf@dest.example',
    `From: app@${s.org.domain}\nTo: lf@dest.example\nSubject: lf\n\nline one\nline two\r\n.\r\n`)
  assert.match(reply, /^250 2\.0\.0 queued as msg_/)
  await c.quit()
  await eventually(() => s.sink.to('lf@dest.example').length === 1, 'delivery')
  const raw = s.sink.to('lf@dest.example')[0]!.raw
  assert.doesNotMatch(raw.toString('latin1'), /[^\r]\n/)
  assert.match(raw.toString('utf8'), /\r\n\r\nline one\r\nline two\r\n$/)
  assert.equal(await dkimResult(s.ob, s.org, raw), 'pass')
})

test('<LF>.<LF> does not end DATA: the smuggled commands are message text, never a second message', async () => {
  const c = await session()
  const smuggled = `\n.\nMAIL FROM:<app@${s.org.domain}>\r\nRCPT TO:<smuggled@dest.example>\r\n` +
    `DATA\r\nFrom: app@${s.org.domain}\r\n\r\nsmuggled\r\n`
  const reply = await transaction(c, 'lfdot@dest.example', `From: app@${s.org.domain}\r\nSubject: smuggle\r\n\r\nbody${smuggled}.\r\n`)
  assert.match(reply, /^250 2\.0\.0 queued as msg_/)
  assert.match(await c.command('NOOP'), /^250 /, 'exactly one reply for the one DATA')
  await c.quit()
  await eventually(() => s.sink.to('lfdot@dest.example').length === 1, 'delivery')
  await sleep(500)
  assert.equal(s.sink.to('smuggled@dest.example').length, 0)
  assert.match(s.sink.to('lfdot@dest.example')[0]!.raw.toString('utf8'), /RCPT TO:<smuggled@dest\.example>/)
})

test('<CR>.<CR> does not end DATA either; a bare CR is refused 554 5.6.0 and the session goes on', async () => {
  const c = await session()
  const reply = await transaction(c, 'crdot@dest.example',
    `From: app@${s.org.domain}\r\n\r\nbody\r.\rMAIL FROM:<app@${s.org.domain}>\r\nRCPT TO:<smuggled2@dest.example>\r\n.\r\n`)
  assert.match(reply, /^554 5\.6\.0 .*bare CR/)
  assert.match(await c.command('RSET'), /^250 /)
  await c.quit()
  await sleep(500)
  assert.equal(s.sink.to('smuggled2@dest.example').length + s.sink.to('crdot@dest.example').length, 0)
})

test('NUL and a line over 998 octets are refused 554 5.6.0', async () => {
  const c = await session()
  assert.match(await transaction(c, 'nul@dest.example', `From: app@${s.org.domain}\r\n\r\na\0b\r\n.\r\n`), /^554 5\.6\.0 .*NUL/)
  assert.match(await transaction(c, 'long@dest.example', `From: app@${s.org.domain}\r\n\r\n${'x'.repeat(999)}\r\n.\r\n`), /^554 5\.6\.0 .*998/)
  assert.match(await transaction(c, 'ok998@dest.example', `From: app@${s.org.domain}\r\n\r\n${'x'.repeat(998)}\r\n.\r\n`), /^250 /)
  await c.quit()
})

test('X-Outbox-Metadata must be a JSON object and X-Outbox-Tags a list of tags (554 5.6.0)', async () => {
  const c = await session()
  assert.match(await transaction(c, 'meta@dest.example', `From: app@${s.org.domain}\r\nX-Outbox-Metadata: [1]\r\n\r\nx\r\n.\r\n`), /^554 5\.6\.0 X-Outbox-Metadata/)
  assert.match(await transaction(c, 'meta@dest.example', `From: app@${s.org.domain}\r\nX-Outbox-Tags: a b\r\n\r\nx\r\n.\r\n`), /^554 5\.6\.0 X-Outbox-Tags/)
  // nodemailer writes JSON as an RFC 2047 encoded word; it is decoded first
  const encoded = `=?UTF-8?B?${Buffer.from('{"user":"ü1"}').toString('base64')}?=`
  assert.match(await transaction(c, 'meta@dest.example', `From: app@${s.org.domain}\r\nX-Outbox-Metadata: ${encoded}\r\n\r\nx\r\n.\r\n`), /^250 /)
  await c.quit()
})

test('8-bit data without BODY=8BITMIME is accepted as 8BITMIME (as Postfix does; Django sends it so)', async () => {
  const c = await session()
  const reply = await transaction(c, 'eight@dest.example', `From: app@${s.org.domain}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
    'Content-Transfer-Encoding: 8bit\r\n\r\nGrüße\r\n.\r\n')
  assert.match(reply, /^250 2\.0\.0 queued as/)
  await c.quit()
  await eventually(() => s.sink.to('eight@dest.example').length === 1, 'delivery')
  assert.match(s.sink.to('eight@dest.example')[0]!.raw.toString('utf8'), /Grüße/)
})

test('a pipelined flood of commands is answered in order without harming the server', async () => {
  const c = await session()
  c.write('NOOP\r\n'.repeat(5000) + 'QUIT\r\n')
  let replies = 0
  for (;;) {
    const r = await c.reply(10_000)
    if (r === '' || r.startsWith('221')) break
    replies++
  }
  assert.ok(replies > 0)
  c.close()
  const again = await session()
  assert.match(await again.command('NOOP'), /^250 /)
  await again.quit()
})

test('an idle session is closed with 421 after OB_SMTP_SUBMISSION_IDLE_TIMEOUT_MS', async () => {
  const c = await RawSmtp.open(s.port)
  await c.command('EHLO client.test')
  const reply = await c.reply(5000)
  assert.match(reply, /^421 /)
  await c.whenClosed()
})

test('sessions past the per-address cap are refused 421 at connection', async () => {
  const open: RawSmtp[] = []
  for (let i = 0; i < 6; i++) open.push(await RawSmtp.open(s.port))
  const extra = await RawSmtp.open(s.port)
  assert.match(extra.greeting, /^421 4\.7\.0 Too many connections/)
  extra.close()
  for (const c of open) c.close()
})

test('closing the server (drain) answers a session still open at the deadline 421 and refuses new ones', async () => {
  const c = await session()
  const closed = s.ob.proc.gateway!.submission!.close(300)
  assert.match(await c.reply(5000), /^421 /)
  await c.whenClosed()
  await closed
  await assert.rejects(RawSmtp.open(s.port))
})
