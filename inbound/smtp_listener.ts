import { readFileSync } from 'node:fs'
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server'
import { headers as natsHeaders } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import { newId, inboundSubject, shardOf, HDR_MSG_ID, encodeJob, type InboundJob } from '../protocol/mod.ts'
import { type ControlPlane } from '../stores/control_plane/mod.ts'
import { resolveRecipient } from './recipients.ts'
import { INBOUND_JOB_MAX_BYTES, type InboundStores } from './streams.ts'
import { storeSmall, storeInline, fitsInline, RAW_CHUNK_BYTES, type JustStored } from './raw_store.ts'
import { SessionLimits, SmtpReply } from '../stores/smtp_server/mod.ts'
import type { RedisHealth } from '../stores/clients/mod.ts'
import type { InboundQuotas } from './quotas.ts'
import type { DmarcIntake } from './dmarc_intake.ts'
import { DMARC_LIMITS } from './dmarc_mail.ts'
import { readUpTo, readWhole, webStreamOf } from './data_stream.ts'
import type { DomainRecord } from '../protocol/mod.ts'
import { isJetStreamFull } from '../stores/clients/mod.ts'

/** 25 MB, the documented limit; smtp-server advertises it (SIZE) and answers 552 past it. */
export const MAX_MESSAGE_BYTES = 25 * 1024 * 1024
/** Job subjects are spread over this many shards so several processors can share the stream evenly. */
export const INBOUND_SHARDS = 16
export const MAX_RECIPIENTS = 100

/**
 * The answer to MAIL FROM and at the end of DATA while Redis refuses writes (full): what is accepted could not be
 * recorded in the read model, so the sending server is asked to come back. 4.3.1: mail system full (RFC 3463).
 */
export const STORE_FULL_TEXT = '4.3.1 Mail store is full, try again later'
/** The inbound stream or raw store at its admission limit, or NATS refusing the write for lack of room. */
export const QUEUE_FULL_TEXT = 'Insufficient system storage, try again later'

const REJECTIONS = {
  syntax: 'Address not accepted: source routes and %/! relay forms are refused',
  relay: 'Relay access denied: we do not accept mail for that domain',
  unknown_mailbox: 'No such mailbox here'
} as const

/** A DMARC report address shares its transaction with no other recipient: the reply to DATA is about the report alone. */
const DMARC_ALONE_TEXT = 'DMARC reports are taken in a transaction of their own, send to this address separately'

/** The routes a stored message's recipients reach, as the quotas count them. */
function routesOf (cp: ControlPlane, session: SMTPServerSession): Set<string> {
  const ids = new Set<string>()
  for (const rcpt of session.envelope.rcptTo) {
    const r = resolveRecipient(cp, rcpt.address)
    if (r.kind === 'route') for (const route of r.routes) ids.add(route.id)
  }
  return ids
}

export interface SmtpListener {
  readonly server: SMTPServer
  readonly port: number
  /** Stops accepting, lets sessions finish, answers 421 to what is still open at the deadline. */
  close: (timeoutMs: number) => Promise<void>
}

/**
 * `maxPayload`: the NATS server's message size limit, which a job carrying its message must also fit. `redis`: the
 * last known Redis health (RedisHealthWatch); while it is `full`, MAIL FROM and DATA are answered 451. `room`: whether
 * the inbound stream and raw store are at their admission limit (StreamRoomWatch); while they are, MAIL FROM is
 * answered 452, as when NATS itself refuses the write.
 */
export async function startSmtpListener (config: Config, deps: {
  cp: ControlPlane, stores: InboundStores, log: Logger, justStored: JustStored, maxPayload: number,
  redis: { readonly health: RedisHealth }, quotas: InboundQuotas, room: { readonly full: boolean, noteWritten: (bytes: number) => void },
  dmarc: DmarcIntake
}): Promise<SmtpListener> {
  const { cp, stores, log, justStored, quotas } = deps
  const inlineMax = Math.min(INBOUND_JOB_MAX_BYTES, deps.maxPayload)
  const tls = config.smtp.inboundTlsCert !== undefined && config.smtp.inboundTlsKey !== undefined
    ? { key: readFileSync(config.smtp.inboundTlsKey), cert: readFileSync(config.smtp.inboundTlsCert) }
    : undefined

  const jobFor = (id: string, session: SMTPServerSession, size: number): InboundJob => ({
    id,
    received_at: new Date().toISOString(),
    mail_from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
    rcpt_to: session.envelope.rcptTo.map((r) => r.address),
    remote_ip: session.remoteAddress,
    helo: session.hostNameAppearsAs ?? '',
    size
  })

  /** The domain whose DMARC report address the transaction is for (then its only recipient), else undefined. */
  const dmarcDomain = (session: SMTPServerSession): DomainRecord | undefined => {
    const first = session.envelope.rcptTo[0]
    const r = first === undefined ? undefined : resolveRecipient(cp, first.address)
    return r?.kind === 'dmarc' ? r.domain : undefined
  }

  /**
   * A DMARC report: read whole (at most DMARC_LIMITS.messageBytes, else 552 once DATA ended), then parsed and added
   * by the intake before the reply, which says what became of it. Nothing is stored for later processing.
   */
  async function takeDmarc (stream: SMTPServerDataStream, session: SMTPServerSession, domain: DomainRecord): Promise<string> {
    const { data, bytes } = await readWhole(stream, DMARC_LIMITS.messageBytes)
    try {
      if (data === undefined) throw deps.dmarc.tooLarge(domain)
      return await deps.dmarc.take(data, domain, jobFor(newId('msg'), session, bytes))
    } finally {
      // refused reports count too: the sending address's quota bounds how often anyone may make us read one
      await quotas.count(session.remoteAddress, new Set(), bytes)
    }
  }

  /** The message's id, and its size when it was stored (a message over the size limit is not). */
  async function store (stream: SMTPServerDataStream, session: SMTPServerSession): Promise<{ id: string, size?: number }> {
    const id = newId('msg')
    const jobOf = (size: number): InboundJob => jobFor(id, session, size)
    let stored = false
    try {
      const head = await readUpTo(stream, RAW_CHUNK_BYTES)
      if (head.ended) {
        if (stream.sizeExceeded) return { id }
        const data = head.chunks.length === 1 ? head.chunks[0]! : Buffer.concat(head.chunks, head.bytes)
        const job = jobOf(head.bytes)
        if (fitsInline(data, job, inlineMax)) {
          await storeInline(stores, data, job, INBOUND_SHARDS)
          return { id, size: head.bytes }
        }
        await storeSmall(stores, data, job, INBOUND_SHARDS)
        justStored.put(id, data)
        return { id, size: head.bytes }
      }
      await stores.raw.put({ name: id }, webStreamOf(stream, MAX_MESSAGE_BYTES, head))
      stored = true
      // smtp-server answers 552 itself when the message was over the limit; drop what was stored.
      if (stream.sizeExceeded || (stream as unknown as { byteLength?: number }).byteLength! > MAX_MESSAGE_BYTES) {
        await stores.raw.delete(id).catch(() => {})
        return { id }
      }
      const job = jobOf((stream as unknown as { byteLength?: number }).byteLength ?? 0)
      const h = natsHeaders()
      h.set(HDR_MSG_ID, id)
      await stores.pub.publish(inboundSubject(shardOf(id, INBOUND_SHARDS)), encodeJob(job), { msgID: id, headers: h })
      return { id, size: job.size }
    } catch (err) {
      if (stored) await stores.raw.delete(id).catch(() => {})
      if (isJetStreamFull(err)) throw new SmtpReply(452, QUEUE_FULL_TEXT, { cause: err })
      throw new SmtpReply(451, 'Temporary local problem storing the message, try again later', { cause: err })
    }
  }

  const limits = new SessionLimits({
    maxConnectionsPerAddress: config.smtp.inboundMaxConnectionsPerAddress,
    sessionDeadlineMs: config.smtp.inboundSessionDeadlineMs
  }, {
    tooManyFromAddress: () => new SmtpReply(421, 'Too many connections from your address, try again later'),
    deadlineText: 'Session time limit reached, closing connection'
  })
  const server = new SMTPServer({
    banner: 'Outbox inbound',
    maxClients: config.smtp.inboundMaxConnections,
    onConnect: limits.onConnect,
    onClose: limits.onClose,
    authOptional: true,
    disabledCommands: tls !== undefined ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls !== undefined ? tls : {}),
    size: MAX_MESSAGE_BYTES,
    // 552 past the limit whatever onData decided (the over-long body was still read to its end).
    ...({ rejectOversized: true } as object),
    logger: false,
    onMailFrom (_address, session, callback) {
      if (deps.redis.health === 'full') return callback(new SmtpReply(451, STORE_FULL_TEXT))
      if (deps.room.full) return callback(new SmtpReply(452, QUEUE_FULL_TEXT))
      // A sending address past its quota of the window is told to go away for now, as MTAs answer a flood.
      quotas.senderOver(session.remoteAddress).then((over) => {
        callback(over === undefined ? undefined : new SmtpReply(421, 'Too much mail from your address for now, try again later'))
      }, () => callback())
    },
    onRcptTo (address, session, callback) {
      // RFC 5321 §4.5.3.1.8: at least 100 recipients must be accepted; more are deferred to a later transaction.
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) {
        return callback(new SmtpReply(452, 'Too many recipients, send the rest in another transaction'))
      }
      const r = resolveRecipient(cp, address.address)
      if (r.kind === 'reject') return callback(new SmtpReply(550, REJECTIONS[r.reason]))
      if (session.envelope.rcptTo.length > 0 && (r.kind === 'dmarc' || dmarcDomain(session) !== undefined)) {
        return callback(new SmtpReply(452, DMARC_ALONE_TEXT, { enhanced: '4.5.3' }))
      }
      if (r.kind === 'dmarc') {
        deps.dmarc.admit(r.domain).then((refused) => callback(refused), () => callback())
        return
      }
      if (r.kind !== 'route') return callback()
      // A route past its quota of the window: this recipient is deferred (452), the sender keeps the mail for later.
      quotas.routeOver(r.routes.map((route) => route.id)).then((over) => {
        callback(over === undefined ? undefined : new SmtpReply(452, 'Mailbox has received all the mail it takes for now, try again later'))
      }, () => callback())
    },
    onData (stream, session, callback) {
      if (deps.redis.health === 'full') {
        // Redis filled up since MAIL FROM: the message is read to its end and dropped, and the sender comes back.
        stream.on('end', () => { callback(new SmtpReply(451, STORE_FULL_TEXT)) })
        stream.resume()
        return
      }
      const reported = dmarcDomain(session)
      if (reported !== undefined) {
        // DATA has ended whenever this settles (readWhole reads it to its end), so the reply can go at once.
        const taken = takeDmarc(stream, session, reported).then((text) => callback(null, text), (err: unknown) => {
          const reply = err instanceof SmtpReply
            ? err
            : new SmtpReply(451, 'Temporary local problem reading the DMARC report, try again later', { enhanced: '4.3.0', cause: err })
          if (reply.responseCode < 500) log.warn({ err: reply.cause ?? reply }, 'DMARC report not taken for now')
          callback(reply)
        })
        stream.once('end', () => { limits.deferWhile(session.id, taken) })
        return
      }
      const stored = store(stream, session).then(
        async ({ id, size }) => {
          // Counted before the 250, so the sender's next transaction is checked against it.
          if (size !== undefined) {
            deps.room.noteWritten(size)
            await quotas.count(session.remoteAddress, routesOf(cp, session), size)
          }
          callback(null, `Message queued as ${id}`)
        },
        (err: SmtpReply) => {
          log.error({ err: err.cause ?? err }, 'inbound message not stored')
          stream.resume() // let smtp-server see the end of DATA and send the reply
          callback(err)
        }
      )
      stream.once('end', () => { limits.deferWhile(session.id, stored) })
    }
  })
  limits.attach(server)
  server.on('error', (err) => log.warn({ err }, 'inbound SMTP error'))
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject)
    server.listen(config.smtp.inboundPort, config.smtp.inboundHost, () => { server.server.off('error', reject); resolve() })
  })
  const address = server.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : config.smtp.inboundPort
  log.info({ host: config.smtp.inboundHost, port, starttls: tls !== undefined }, 'inbound SMTP listening')
  return {
    server,
    port,
    close: (timeoutMs) => new Promise<void>((resolve) => {
      (server as unknown as { options: { closeTimeout: number } }).options.closeTimeout = timeoutMs
      server.close(() => resolve())
    })
  }
}
