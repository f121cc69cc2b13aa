import { SmtpSink } from '../test/helpers/smtp_sink.ts'
import { dkimDomainOf } from './peers_books.ts'

/**
 * The benchmark's SMTP sink in its own process, so the sender being measured does not share a thread or the
 * CPU accounting with it. Talks over IPC: sends `{port}` once listening, answers `'count'` with `{accepted}`.
 * Started with `--record`, it also keeps each message's Message-ID, arrival time and `X-Bench-Sent` header
 * and the domain of its DKIM signature (compactly: the parsed headers are dropped at every `'count'`), and answers
 * `'arrivals'` with them.
 */
export type Arrival = [messageId: string, receivedAt: number, sentAt: number, dkimDomain?: string]

const record = process.argv.includes('--record')
const sink = await SmtpSink.start({ keepRaw: false, record })
const arrivals: Arrival[] = []
const compact = (): void => {
  for (const m of sink.messages.splice(0)) {
    arrivals.push([
      m.messageId, m.receivedAt, Number(m.headers.get('x-bench-sent') ?? NaN), dkimDomainOf(m.headers.get('dkim-signature'))
    ])
  }
}
// Between questions too: a phase of sends may run for minutes without one, and parsed headers are large.
if (record) setInterval(compact, 1000).unref()
process.send!({ port: sink.port })
process.on('message', (m) => {
  if (m === 'count') {
    compact()
    process.send!({ accepted: sink.accepted })
  } else if (m === 'arrivals') {
    compact()
    process.send!({ arrivals })
  } else if (m === 'close') {
    void sink.close().then(() => process.exit(0))
  }
})
