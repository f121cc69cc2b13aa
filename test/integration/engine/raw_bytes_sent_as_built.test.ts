import { test } from 'node:test'
import assert from 'node:assert/strict'
import SMTPPool from 'nodemailer/lib/smtp-pool'
import { PooledDestination } from '../../../engine/actor/transports.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'

test('a pooled destination sends the bytes as built (dot-stuffed on the wire only) with its envelope, ' +
  'an IDN recipient included', async () => {
  const sink = await SmtpSink.start()
  const pool = new PooledDestination(new SMTPPool({
    host: '127.0.0.1', port: sink.port, maxConnections: 2, tls: { rejectUnauthorized: false }
  }))
  try {
    const raw = Buffer.from('From: a@sender.example\r\nTo: b@dest.example\r\nSubject: hi\r\nMessage-ID: <m1@sender.example>\r\n\r\n' +
      'line one\r\n.starts with a dot\r\n.\r\nlast line\r\n')
    const info = await pool.sendMail({
      envelope: { from: 'bounces+x@bounces.sender.example', to: ['user@bücher.example'] }, raw, messageId: '<m1@sender.example>'
    })
    assert.match(String(info.response), /^250/)
    // smtp-server shows the A-label the envelope carried as Unicode again
    const got = sink.to('user@bücher.example')
    assert.equal(got.length, 1)
    assert.equal(got[0]!.mailFrom, 'bounces+x@bounces.sender.example')
    assert.equal(got[0]!.raw.toString('latin1'), raw.toString('latin1'))

    // a refusal comes back as nodemailer's error, with the fields classification reads
    await assert.rejects(
      pool.sendMail({ envelope: { from: 'a@sender.example', to: ['permfail@dest.example'] }, raw, messageId: '<m2@sender.example>' }),
      (err: { responseCode?: number, code?: string }) => err.responseCode === 550 && err.code === 'EENVELOPE')
  } finally {
    pool.close()
    await sink.close()
  }
})
