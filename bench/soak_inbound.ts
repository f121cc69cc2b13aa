import { randomBytes } from 'node:crypto'
import { createTransport } from 'nodemailer'
import { sleep } from '../test/integration/faults/fault_env.ts'

/** What inbound senders did: mails sent (attempts), accepted (250), and the large sender's figures apart. */
export interface InboundTallies {
  inboundSent: number
  inboundAccepted: number
  largeAccepted: number
  /** Attempts of a large mail answered 4xx (451 while a store is full, 421 …), which its sender retried. */
  largeRetried: number
  /** Largest size of the large mails, in bytes. */
  largeBytes: number
}

export interface InboundPlan {
  /** Pause between two small mails. */
  everyMs: number
  /** Pause between two large mails of the one large sender, and their size. */
  largeEveryMs: number
  largeBytes: number
}

/** How long the large sender waits before trying a refused mail again (an MTA waits minutes; the soak is short). */
const LARGE_RETRY_MS = 2000

/**
 * Inbound SMTP traffic: small mails every `everyMs` (one attempt each; refused while NATS is down), and one sender
 * of large mails (an attachment of `largeBytes`) that retries each mail after a 4xx or a broken connection until it
 * is accepted, as an MTA does with a 451, and gives up only when the load stops. Returns the stop function.
 */
export function startInbound (port: number, domain: string, plan: InboundPlan, t: InboundTallies): () => Promise<void> {
  let running = true
  const smtp = createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, pool: false })
  const large = createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, pool: false })
  const small = (async () => {
    while (running) {
      t.inboundSent++
      try {
        await smtp.sendMail({ from: 'Customer <customer@sender.test>', to: `support@${domain}`, subject: 'Soak inbound', text: 'hello' })
        t.inboundAccepted++
      } catch { /* refused while NATS is down: the sender retries later, as MTAs do */ }
      await sleep(plan.everyMs)
    }
  })()
  const big = (async () => {
    for (let n = 0; running; n++) {
      // One mail, the same bytes on every attempt.
      const attachment = randomBytes(plan.largeBytes)
      const mail = {
        from: 'Archive <archive@large-sender.test>',
        to: `support@${domain}`,
        subject: `Soak large inbound ${n}`,
        text: 'The export is attached.',
        attachments: [{ filename: `export-${n}.bin`, content: attachment, contentType: 'application/octet-stream' }]
      }
      t.largeBytes = Math.max(t.largeBytes, plan.largeBytes)
      while (running) {
        t.inboundSent++
        try {
          await large.sendMail(mail)
          t.inboundAccepted++
          t.largeAccepted++
          break
        } catch {
          t.largeRetried++
          await sleep(LARGE_RETRY_MS)
        }
      }
      await sleep(plan.largeEveryMs)
    }
  })()
  return async () => {
    running = false
    await Promise.all([small, big])
    smtp.close()
    large.close()
  }
}
