import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { RawSmtp } from '../../helpers/raw_smtp.ts'
import { eventually } from '../../helpers/waiting.ts'
import { queuedId, startSubmissionScenario, submissionClient, type SubmissionScenario } from '../../helpers/submission.ts'
import { suppressAddress } from '../../../stores/events/mod.ts'

let s: SubmissionScenario
before(async () => { s = await startSubmissionScenario({ OB_ENTERPRISE_RATE_LIMIT: '4' }) })
after(async () => { await s.close() })

interface SmtpFailure { responseCode?: number, response?: string }

async function refusal (p: Promise<unknown>): Promise<SmtpFailure> {
  try {
    await p
  } catch (err) {
    return err as SmtpFailure
  }
  throw new Error('the message was accepted')
}

test('AUTH is refused before STARTTLS (538), and so is mail without AUTH (530)', async () => {
  const c = await RawSmtp.open(s.port)
  const ehlo = await c.command('EHLO client.test')
  assert.match(ehlo, /STARTTLS/)
  // Addresses must be ASCII (the HTTP send's rule), so SMTPUTF8 is not offered.
  assert.doesNotMatch(ehlo, /SMTPUTF8/)
  assert.match(await c.command(`AUTH PLAIN ${Buffer.from('\0apikey\0ob_live_aaaaaaaaaaaaaaaaaaaa').toString('base64')}`), /^538 /)
  assert.match(await c.command('MAIL FROM:<a@b.test>'), /^530 /)
  await c.quit()
})

test('a wrong key, or one without send, is refused 535 5.7.8', async () => {
  const bad = await refusal(submissionClient(s.port, 'ob_live_notakeynotakeynotakey')
    .sendMail({ from: `a@${s.org.domain}`, to: 'x@dest.example', text: 'x' }))
  assert.equal(bad.responseCode, 535)
  assert.match(bad.response!, /^535 5\.7\.8 /)
  const readOnly = await s.ob.key(s.org, ['read'])
  const noSend = await refusal(submissionClient(s.port, readOnly).sendMail({ from: `a@${s.org.domain}`, to: 'x@dest.example', text: 'x' }))
  assert.match(noSend.response!, /^535 5\.7\.8 .*"send" permission/)
})

test('AUTH says why a key is refused, as the HTTP API does: unknown, or revoked', async () => {
  const unknown = await refusal(submissionClient(s.port, 'ob_live_notakeynotakeynotakey')
    .sendMail({ from: `a@${s.org.domain}`, to: 'x@dest.example', text: 'x' }))
  assert.match(unknown.response!, /^535 5\.7\.8 .*not valid/)
  const created = await s.ob.request('POST', '/v1/api-keys', {
    key: s.org.adminKey, body: { name: 'soon revoked', domain_id: s.org.domainId, permissions: ['send'] }
  })
  assert.equal(created.status, 201)
  const { id, key } = created.body as { id: string, key: string }
  assert.equal((await s.ob.request('DELETE', `/v1/api-keys/${id}`, { key: s.org.adminKey })).status, 204)
  await eventually(() => s.ob.proc.cp.apiKeys.get(id)?.revoked_at !== undefined, 'the revocation mirrored')
  const revoked = await refusal(submissionClient(s.port, key).sendMail({ from: `a@${s.org.domain}`, to: 'x@dest.example', text: 'x' }))
  assert.match(revoked.response!, /^535 5\.7\.8 .*revoked/)
  assert.doesNotMatch(revoked.response!, /not valid/)
})

test('MAIL FROM or the From header outside the key\'s domain is refused 553 5.7.1', async () => {
  const key = await s.ob.key(s.org, ['send'])
  const client = submissionClient(s.port, key)
  const envelope = await refusal(client.sendMail({ from: 'a@other.example', to: 'x@dest.example', text: 'x' }))
  assert.match(envelope.response!, /^553 5\.7\.1 /)
  const header = await refusal(client.sendMail({
    envelope: { from: `a@${s.org.domain}`, to: 'x@dest.example' }, from: 'boss@other.example', to: 'x@dest.example', text: 'x'
  }))
  assert.match(header.response!, /^553 5\.7\.1 .*From header/)
  const spoof = await refusal(client.sendMail({ from: `"boss@other.example" <a@${s.org.domain}>`, to: 'x@dest.example', text: 'x' }))
  assert.match(spoof.response!, /^553 5\.7\.1 /)
  const missing = await refusal(client.sendMail({
    envelope: { from: `a@${s.org.domain}`, to: ['x@dest.example'] }, raw: 'To: x@dest.example\r\nSubject: no from\r\n\r\nbody\r\n'
  }))
  assert.match(missing.response!, /^554 5\.6\.0 .*no From/)
  client.close()
  assert.equal(s.sink.to('x@dest.example').length, 0)
})

test('a suppressed recipient is refused 550 5.1.1 at RCPT; the others get the message', async () => {
  await suppressAddress(s.ob.proc.cp, s.org.orgId, 'gone@dest.example', 'hard_bounce')
  await eventually(() => s.ob.proc.cp.isSuppressed(s.org.orgId, 'gone@dest.example'), 'the suppression mirrored')
  const client = submissionClient(s.port, await s.ob.key(s.org, ['send']))
  const info = await client.sendMail({ from: `a@${s.org.domain}`, to: ['gone@dest.example', 'here@dest.example'], text: 'x' })
  client.close()
  assert.deepEqual(info.rejected, ['gone@dest.example'])
  assert.match((info.rejectedErrors![0] as SmtpFailure).response!, /^550 5\.1\.1 /)
  queuedId(info.response)
  await eventually(() => s.sink.to('here@dest.example').length === 1, 'delivery to the other recipient')
})

test('the 51st recipient is deferred 452 4.5.3 (RFC 5321: send it in another transaction)', async () => {
  const client = submissionClient(s.port, await s.ob.key(s.org, ['send']))
  const to = Array.from({ length: 51 }, (_, i) => `many${i}@dest.example`)
  const info = await client.sendMail({ from: `a@${s.org.domain}`, to, text: 'x' })
  client.close()
  assert.equal(info.accepted.length, 50)
  assert.deepEqual(info.rejected, ['many50@dest.example'])
  assert.match((info.rejectedErrors![0] as SmtpFailure).response!, /^452 4\.5\.3 /)
})

test('a message just under 10 MB is accepted and delivered whole', async () => {
  const client = submissionClient(s.port, await s.ob.key(s.org, ['send']))
  const text = 'z'.repeat(76).concat('\n').repeat(128_000) // 9.86 MB, 10.1 MB with CRLF line ends
  const mail = {
    from: `a@${s.org.domain}`, to: 'large@dest.example', subject: 'large', text, headers: { 'Content-Transfer-Encoding': '7bit' }
  }
  // a temporary refusal (451: the limiter's Redis slow to answer on a busy machine) is tried again, as clients do
  let info = await client.sendMail(mail).catch((err: SmtpFailure) => err)
  for (let tries = 0; 'responseCode' in info && info.responseCode === 451 && tries < 3; tries++) {
    info = await client.sendMail(mail).catch((err: SmtpFailure) => err)
  }
  client.close()
  if (!('accepted' in info)) assert.fail(`refused: ${info.response ?? ''}`)
  queuedId(info.response)
  await eventually(() => s.sink.to('large@dest.example').length === 1, 'delivery of the large message', 60_000)
  assert.ok(s.sink.to('large@dest.example')[0]!.raw.length > 9_900_000)
})

test('a message over 10 MB is refused 552 and nothing is queued', async () => {
  const c = await RawSmtp.open(s.port)
  assert.match(await c.command('EHLO client.test'), /SIZE 10485760/)
  await c.quit()
  const client = submissionClient(s.port, await s.ob.key(s.org, ['send']))
  const text = 'y'.repeat(76).concat('\n').repeat(140_000)
  // A 4xx (the rate limiter's Redis slow to answer on a loaded host) asks the client to try again, as an MTA would.
  let big = await refusal(client.sendMail({ from: `a@${s.org.domain}`, to: 'big@dest.example', text }))
  for (let tries = 1; tries < 3 && big.responseCode! >= 400 && big.responseCode! < 500; tries++) {
    big = await refusal(client.sendMail({ from: `a@${s.org.domain}`, to: 'big@dest.example', text }))
  }
  client.close()
  assert.equal(big.responseCode, 552, big.response)
  await new Promise((resolve) => setTimeout(resolve, 500))
  assert.equal(s.sink.to('big@dest.example').length, 0)
})

test('the per-key rate limit is the HTTP one, shared with HTTP sends: 451 4.7.1 with the retry time', async () => {
  const org = await s.ob.org('enterprise')
  const key = await s.ob.key(org, ['send'])
  // two of the four requests a minute go to HTTP, two to SMTP; the fifth, by SMTP, is refused
  for (let i = 0; i < 2; i++) {
    const r = await s.ob.request('POST', '/v1/messages/send', {
      key, body: { from: `a@${org.domain}`, to: 'rl@dest.example', subject: 'x', text: 'x' }
    })
    assert.equal(r.status, 202)
  }
  const client = submissionClient(s.port, key)
  for (let i = 0; i < 2; i++) queuedId((await client.sendMail({ from: `a@${org.domain}`, to: 'rl@dest.example', text: 'x' })).response)
  const limited = await refusal(client.sendMail({ from: `a@${org.domain}`, to: 'rl@dest.example', text: 'x' }))
  client.close()
  assert.match(limited.response!, /^451 4\.7\.1 Rate limit of 4 messages per minute exceeded; try again in \d+ s/)
  const http = await s.ob.request('POST', '/v1/messages/send', {
    key, body: { from: `a@${org.domain}`, to: 'rl@dest.example', subject: 'x', text: 'x' }
  })
  assert.equal(http.status, 429)
})

test('failed authentications are throttled per client address (454 4.7.0); a valid key still authenticates', async () => {
  let last: SmtpFailure = {}
  for (let i = 0; i < 60 && last.responseCode !== 454; i++) {
    last = await refusal(submissionClient(s.port, `ob_live_wrongwrongwrong${String(i).padStart(4, '0')}`)
      .sendMail({ from: `a@${s.org.domain}`, to: 'x@dest.example', text: 'x' }))
  }
  assert.match(last.response!, /^454 4\.7\.0 Too many failed authentications/)
  const client = submissionClient(s.port, await s.ob.key(s.org, ['send']))
  queuedId((await client.sendMail({ from: `a@${s.org.domain}`, to: 'after@dest.example', text: 'x' })).response)
  client.close()
})

test('a client that talks before the greeting is answered 421', async () => {
  const said = await new Promise<string>((resolve) => {
    const socket = connect(s.port, '127.0.0.1')
    let text = ''
    socket.once('connect', () => socket.write('EHLO early.test\r\n'))
    socket.on('data', (d: Buffer) => { text += d.toString() })
    socket.on('error', () => {})
    socket.on('close', () => resolve(text))
  })
  assert.match(said, /^421 /m)
})

test('a key whose domain is not verified is refused 553 5.7.1 at MAIL FROM', async () => {
  const org = await s.ob.org()
  await s.ob.proc.cp.domains.modify(`${org.orgId}.${org.domainId}`, (d) => ({ ...d, status: 'pending' }))
  await eventually(() => s.ob.proc.cp.domain(org.orgId, org.domainId)?.status === 'pending', 'the domain mirrored as pending')
  const client = submissionClient(s.port, await s.ob.key(org, ['send']))
  const r = await refusal(client.sendMail({ from: `a@${org.domain}`, to: 'x@dest.example', text: 'x' }))
  client.close()
  assert.match(r.response!, /^553 5\.7\.1 .*not verified/)
  assert.ok(r.response!.includes(`POST /v1/domains/${org.domainId}/verify`), r.response)
})
