import { SmtpSink } from '../test/helpers/smtp_sink.ts'

/**
 * The benchmark's SMTP sink in its own process, so the sender being measured does not share a thread or the
 * CPU accounting with it. Talks over IPC: sends `{port}` once listening, answers `'count'` with `{accepted}`.
 */
const sink = await SmtpSink.start({ keepRaw: false, record: false })
process.send!({ port: sink.port })
process.on('message', (m) => {
  if (m === 'count') process.send!({ accepted: sink.accepted })
  else if (m === 'close') void sink.close().then(() => process.exit(0))
})
