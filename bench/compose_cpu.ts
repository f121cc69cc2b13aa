import { generateKeyPairSync } from 'node:crypto'
import nodemailer from 'nodemailer'
import MailComposer from 'nodemailer/lib/mail-composer'
import { ComposedMessage, DKIM_SIGNED_HEADERS, type ComposeContext } from '../engine/actor/compose.ts'
import { buildLayout } from '../engine/actor/mime.ts'
import { rewriteHtml } from '../engine/actor/tracking.ts'
import type { TaskMessage } from '../engine/actor/task.ts'
import { defaultReturnPathHost, encodeVerp, signToken } from '../protocol/mod.ts'

/**
 * CPU per recipient of building and signing a message, without SMTP: nodemailer's per-recipient MIME stream and
 * DKIM stream (what the engine did before) against the engine's compose-once, splice-per-recipient path. The two
 * run alternately in one process, so the machine's load falls on both alike.
 *
 *   node dist/bench/compose_cpu.js [rounds=3] [messages=400]
 */
const rounds = Number(process.argv[2] ?? 3)
const messages = Number(process.argv[3] ?? 400)

const HTML = `<html><body><h1>Your receipt</h1>${'<p>Thank you for your <a href="https://shop.example/order">order</a>. This paragraph pads the message to a realistic size for a transactional email.</p>'.repeat(40)}</body></html>`
const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
const ctx: ComposeContext = {
  publicUrl: 'https://t.example',
  secret: Buffer.alloc(32, 1),
  domain: 'sender.example',
  dkim: [{ domain: 'sender.example', selector: 's1', key }],
  verpKey: { id: 'k1', secret: Buffer.alloc(32, 2) }
}

function message (i: number, tracked: boolean, recipients: number): TaskMessage {
  return {
    id: `msg_${String(i).padStart(26, '0')}`,
    org_id: 'org_1',
    from: 'Shop <shop@sender.example>',
    to: Array.from({ length: recipients }, (_, r) => `user${r}@dest.example`),
    cc: [],
    subject: 'Your receipt',
    html: HTML,
    text: 'Thank you for your order.',
    headers: { 'X-Campaign': 'receipts' },
    attachments: [],
    track_opens: tracked,
    track_clicks: tracked
  }
}

const stream = nodemailer.createTransport({ streamTransport: true, buffer: true })

/** The nodemailer options the engine built per recipient before (compose.ts at the previous commit). */
async function viaNodemailer (msg: TaskMessage): Promise<number> {
  let bytes = 0
  for (const rcpt of msg.to) {
    const claims = { o: msg.org_id, m: msg.id, r: rcpt }
    const returnPath = encodeVerp(msg.id, rcpt, defaultReturnPathHost(ctx.domain), ctx.verpKey)
    const html = msg.track_opens
      ? rewriteHtml(msg.html!, {
        openUrl: `${ctx.publicUrl}/t/o/${signToken(ctx.secret, { k: 'o', ...claims })}`,
        clickUrl: (u) => `${ctx.publicUrl}/t/c/${signToken(ctx.secret, { k: 'c', ...claims, u })}`
      })
      : msg.html
    const unsubscribeUrl = `${ctx.publicUrl}/t/u/${signToken(ctx.secret, { k: 'u', ...claims })}`
    const info = await stream.sendMail({
      from: msg.from,
      to: msg.to,
      subject: msg.subject,
      messageId: `<${msg.id}@${ctx.domain}>`,
      envelope: { from: returnPath, to: [rcpt] },
      headers: {
        ...msg.headers,
        'List-Unsubscribe': `<${unsubscribeUrl}>, <mailto:${returnPath}?subject=unsubscribe>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click'
      },
      html,
      text: msg.text,
      dkim: { domainName: ctx.domain, keySelector: 's1', privateKey: key as unknown as string, headerFieldNames: DKIM_SIGNED_HEADERS }
    })
    bytes += (info.message as Buffer).length
  }
  return bytes
}

async function viaEngine (msg: TaskMessage): Promise<number> {
  const composed = new ComposedMessage(msg, msg, ctx)
  let bytes = 0
  for (const rcpt of msg.to) bytes += composed.forRecipient(rcpt).raw.length
  return bytes
}

/** MIME alone, no DKIM and no tracking: nodemailer's MailComposer stream against the engine's layout. */
async function mimeNodemailer (msg: TaskMessage): Promise<number> {
  const built = await new MailComposer({
    from: msg.from, to: msg.to, subject: msg.subject, html: msg.html, text: msg.text, headers: msg.headers
  }).compile().build()
  return built.length
}

async function mimeEngine (msg: TaskMessage): Promise<number> {
  const l = buildLayout({
    from: msg.from,
    to: msg.to,
    cc: [],
    subject: msg.subject,
    messageId: `<${msg.id}@x>`,
    headers: msg.headers,
    html: msg.html!,
    text: msg.text!,
    attachments: []
  }, false)
  return Buffer.from(l.head + '\r\n' + (l.body as string[]).join(''), 'latin1').length
}

async function measure (run: (m: TaskMessage) => Promise<number>, tracked: boolean, recipients: number): Promise<number> {
  for (let i = 0; i < 20; i++) await run(message(i, tracked, recipients))
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < messages; i++) await run(message(i, tracked, recipients))
  const cpu = process.cpuUsage(cpu0)
  return (cpu.user + cpu.system) / (messages * recipients)
}

const cases: Array<[string, boolean, number, (m: TaskMessage) => Promise<number>, (m: TaskMessage) => Promise<number>]> = [
  ['MIME only, 1 recipient', false, 1, mimeNodemailer, mimeEngine],
  ['MIME + DKIM, untracked, 1 recipient', false, 1, viaNodemailer, viaEngine],
  ['MIME + DKIM, tracked, 1 recipient', true, 1, viaNodemailer, viaEngine],
  ['MIME + DKIM, untracked, 10 recipients', false, 10, viaNodemailer, viaEngine],
  ['MIME + DKIM, tracked, 10 recipients', true, 10, viaNodemailer, viaEngine]
]
console.log(`CPU µs per recipient (${messages} messages per measurement, load ${(await import('node:os')).loadavg()[0]!.toFixed(1)})`)
console.log('case'.padEnd(40), 'nodemailer'.padStart(11), 'engine'.padStart(9), 'ratio'.padStart(7))
for (let r = 0; r < rounds; r++) {
  for (const [name, tracked, recipients, before, after] of cases) {
    const a = await measure(before, tracked, recipients)
    const b = await measure(after, tracked, recipients)
    console.log(name.padEnd(40), a.toFixed(0).padStart(11), b.toFixed(0).padStart(9), (a / b).toFixed(2).padStart(7))
  }
}
