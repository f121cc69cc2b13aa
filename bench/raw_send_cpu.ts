import nodemailer from 'nodemailer'
import SMTPPool from 'nodemailer/lib/smtp-pool'
import { PooledDestination } from '../engine/actor/transports.ts'
import { RemoteSink } from './engine.ts'

/**
 * CPU of this process per message for handing finished bytes to a pooled SMTP connection (10 connections, 100
 * sends in flight) into the local sink (its own process): nodemailer's `sendMail({ raw, envelope })` against the
 * engine's PooledDestination. The two alternate in one run.
 *
 *   node dist/bench/raw_send_cpu.js [rounds=3] [messages=2000]
 */
const rounds = Number(process.argv[2] ?? 3)
const messages = Number(process.argv[3] ?? 2000)
const HEAD = 'From: a@sender.example\r\nTo: b@dest.example\r\nSubject: hi\r\nMessage-ID: <m@sender.example>\r\n\r\n'
const raw = Buffer.from(HEAD + 'Thank you for your order. This line pads the message to a realistic size.\r\n'.repeat(70))
const sink = await RemoteSink.start()
const options = { host: '127.0.0.1', port: sink.port, maxConnections: 10, maxMessages: 100, tls: { rejectUnauthorized: false } }
const mailer = nodemailer.createTransport({ pool: true, ...options })
const pooled = new PooledDestination(new SMTPPool(options))
const envelope = { from: 'bounces@sender.example', to: ['b@dest.example'] }

async function run (send: () => Promise<unknown>): Promise<number> {
  let next = 0
  const cpu0 = process.cpuUsage()
  await Promise.all(Array.from({ length: 100 }, async () => { while (next++ < messages) await send() }))
  const cpu = process.cpuUsage(cpu0)
  return (cpu.user + cpu.system) / messages
}
const viaSendMail = async (): Promise<unknown> => await mailer.sendMail({ raw, envelope })
const viaPool = async (): Promise<unknown> => await pooled.sendMail({ raw, envelope, messageId: '<m@sender.example>' })
await run(viaSendMail)
await run(viaPool)
for (let r = 0; r < rounds; r++) {
  const sendMailUs = (await run(viaSendMail)).toFixed(0)
  const pooledUs = (await run(viaPool)).toFixed(0)
  console.log(`round ${r}: sendMail(raw) ${sendMailUs} µs, pooled raw ${pooledUs} µs CPU per message`)
}
mailer.close()
pooled.close()
await sink.close()
