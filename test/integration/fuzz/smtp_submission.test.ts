import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import fc from 'fast-check'
import { jetstreamManager } from '@nats-io/jetstream'
import { STREAM_OUTBOUND } from '../../../protocol/mod.ts'
import { queuedId, startSubmissionScenario, submissionClient, type SubmissionScenario } from '../../helpers/submission.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * Random and garbled SMTP sessions over raw sockets (AUTH allowed without TLS so they reach every state): the
 * server never crashes, answers every line with a reply code, and stores exactly the messages it answered
 * `250 … queued as` for: none is half stored, whether the session ends with QUIT or is cut in the middle of DATA.
 */
let s: SubmissionScenario
let key: string
before(async () => {
  s = await startSubmissionScenario({ OB_SMTP_SUBMISSION_INSECURE_AUTH: 'true', OB_SMTP_SUBMISSION_IDLE_TIMEOUT_MS: '3000' })
  key = await s.ob.key(s.org, ['send'])
})
after(async () => { await s.close() })

const queued = new Set<string>()

/** Writes `data` (pipelined, in one or several writes), then ends as told; resolves with everything the server said. */
async function session (chunks: Buffer[], cut: boolean): Promise<string> {
  return await new Promise((resolve) => {
    const socket = connect(s.port, '127.0.0.1')
    let said = ''
    const timer = setTimeout(() => { socket.destroy() }, 8000)
    socket.on('data', (d: Buffer) => { said += d.toString('latin1') })
    socket.on('error', () => {})
    socket.on('close', () => { clearTimeout(timer); resolve(said) })
    // after the greeting: smtp-server refuses a client that talks first (421), which would end every session there
    socket.once('data', () => {
      for (const c of chunks) socket.write(c)
      if (cut) setTimeout(() => socket.destroy(), 50)
      else socket.write('\r\n.\r\nQUIT\r\n')
    })
  })
}

test('a few hundred random sessions neither crash the server nor store half a message', async () => {
  const auth = `AUTH PLAIN ${Buffer.from(`\0apikey\0${key}`).toString('base64')}`
  const from = `app@${s.org.domain}`
  const line = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom('EHLO fuzz.test', 'HELO fuzz.test', auth, auth, 'AUTH LOGIN', 'AUTH PLAIN', 'AUTH PLAIN AAAA',
        'AUTH CRAM-MD5', `MAIL FROM:<${from}>`, `MAIL FROM:<${from}>`, `MAIL FROM:<${from}> BODY=8BITMIME SIZE=100`,
        'MAIL FROM:<x@other.example>', 'MAIL FROM:<>', `MAIL FROM:<${from}> SIZE=99999999999`, 'RCPT TO:<fuzz@dest.example>',
        'RCPT TO:<fuzz2@dest.example>', 'RCPT TO:<bad address>', 'RCPT TO:<a@b>', 'DATA', 'DATA', 'BDAT 10 LAST', 'RSET', 'NOOP', 'VRFY x',
        'EXPN x', 'HELP', 'STARTTLS', 'QUIT', '', '.', '..', `From: ${from}`, 'From: x@other.example', 'Subject: fuzz',
        'X-Outbox-Metadata: {"a":"b"}', 'X-Outbox-Metadata: {', 'X-Outbox-Tags: a,b', 'Message-ID: <fuzz@x>', '\n.\n', '\r.\r', 'a\0b',
        'Grüße')
    },
    { weight: 2, arbitrary: fc.string({ maxLength: 80 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('x'.repeat(1200), 'MAIL FROM:<' + 'a'.repeat(3000) + '@x.test>',
        'RCPT TO:<' + 'b'.repeat(600) + '@dest.example>')
    }
  )
  const ending = fc.constantFrom('\r\n', '\r\n', '\r\n', '\n', '\r', '')
  const sessionArb = fc.record({
    lines: fc.array(fc.tuple(line, ending), { minLength: 1, maxLength: 16 }),
    // half the sessions open with a well-formed transaction, so that the random lines also land in DATA
    wellFormedStart: fc.boolean(),
    cut: fc.boolean(),
    split: fc.boolean()
  })
  let sessions = 0
  const start = ['EHLO fuzz.test', auth, `MAIL FROM:<${from}>`, 'RCPT TO:<fuzz@dest.example>', 'DATA', `From: ${from}`, 'Subject: fuzz', '']
    .join('\r\n') + '\r\n'
  await fc.assert(fc.asyncProperty(sessionArb, async ({ lines, wellFormedStart, cut, split }) => {
    sessions++
    const text = (wellFormedStart ? start : '') + lines.map(([l, e]) => l + e).join('')
    // Cut sessions never send the end of DATA, so whatever they began must be dropped.
    const body = cut ? text.replace(/\r\n\.\r\n/g, '\r\n..\r\n') : text
    const bytes = Buffer.from(body, 'latin1')
    const chunks = split && bytes.length > 2 ? [bytes.subarray(0, bytes.length >> 1), bytes.subarray(bytes.length >> 1)] : [bytes]
    const said = await session(chunks, cut)
    for (const m of said.matchAll(/^250 2\.0\.0 queued as (msg_[0-9a-z]{26})/gm)) queued.add(m[1]!)
    // Every line the server wrote is a reply: a code, then a space or a dash.
    for (const reply of said.split('\r\n').filter((l) => l !== '')) assert.match(reply, /^[2-5]\d\d[ -]/, JSON.stringify(reply))
  }), { numRuns: 300, seed: 20261125 })
  assert.equal(sessions, 300)
  // the sessions reached every state, queuing included
  assert.ok(queued.size >= 5, `only ${queued.size} sessions queued a message`)

  // The server still takes mail from a well-behaved client.
  const client = submissionClient(s.port, key)
  const info = await client.sendMail({ from, to: 'after-fuzz@dest.example', subject: 'after', text: 'still here' })
  client.close()
  queued.add(queuedId(info.response))
  await eventually(() => s.sink.to('after-fuzz@dest.example').length === 1, 'delivery after the fuzz')

  // Exactly the answered messages were stored: one stream sequence each, nothing else.
  const jsm = await jetstreamManager(s.ob.proc.nc)
  const info2 = await jsm.streams.info(STREAM_OUTBOUND)
  assert.equal(info2.state.last_seq, queued.size, `stored ${info2.state.last_seq}, answered ${queued.size}`)
})
