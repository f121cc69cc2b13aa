/**
 * The three servers the gateway benchmark compares, each started in its own child process by `gateway.ts`:
 * - full:    the Outbox gateway as shipped (uWS pipeline → auth → GCRA in Redis → TypeBox → Idempotency-Key claim
 *            → JetStream PubAck → read model and idempotency record → 202)
 * - fastify: Fastify doing the same send path with the same modules (auth, GCRA script, TypeBox, idempotency store,
 *            request-publish, read model)
 * - bare:    uWebSockets.js parsing the JSON body and answering 202, the ceiling for any HTTP JSON endpoint here
 * - fastify-bare: Fastify parsing the JSON body and answering 202: with `bare`, the cost of the HTTP layer alone
 * - floor:   uWebSockets.js with only the two round trips every send needs (one GCRA script in Redis, one
 *            JetStream publish with its PubAck) around the JSON parse: no auth, validation, idempotency or read
 *            model. What any durable, rate-limited send endpoint costs here; the full path cannot be faster.
 * Each prints one JSON line `{port, key, domain}` on stdout when it is ready and exits on SIGTERM.
 */
import uWS from 'uWebSockets.js'
import Fastify from 'fastify'
import { pino } from 'pino'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Redis } from 'ioredis'
import { Compile } from 'typebox/compile'
import { loadConfig, type Config } from '../config/mod.ts'
import { ApiError, newId, REDIS_KEYS, SendRequest, outboundSubject, shardOf, streamSettings } from '../protocol/mod.ts'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { JsPublisher, connectNats, connectRedis, ensureStreams, redisReady } from '../stores/clients/mod.ts'
import { MessageStore } from '../stores/read_model/mod.ts'
import { startOutbox } from '../cli/outbox_process.ts'
import { createOrganization, buildApiKey } from '../gateway/control/orgs.ts'
import { authenticate, hasPermission } from '../gateway/auth.ts'
import { planLimit } from '../gateway/server.ts'
import { RateLimiter } from '../gateway/rate_limit.ts'
import { IdempotencyLedger, IdempotencyStore, IDEMPOTENCY_TTL_MS, checkIdempotencyKey, fingerprint } from '../gateway/idempotency/mod.ts'
import { Problems, isPrepared, prepareMessage } from '../gateway/send/prepare.ts'

export type Target = 'full' | 'fastify' | 'bare' | 'fastify-bare' | 'floor'

/** High enough that the limiter runs on every request but never refuses one. */
const BENCH_RATE_LIMIT = 10_000_000

function configFor (natsUrl: string, redisUrl: string): Config {
  return loadConfig({
    NATS_URL: natsUrl,
    REDIS_URL: redisUrl,
    OB_ROLE: 'gateway',
    OB_HTTP_PORT: '0',
    OB_SMTP_SUBMISSION_PORT: '0',
    OB_LOG_LEVEL: 'silent',
    OB_DOMAIN_VERIFICATION: 'off'
  })
}

/** An enterprise organisation with the bench limit and a send key. */
async function benchOrg (cp: ControlPlane, config: Config, domain: string): Promise<string> {
  const created = await createOrganization(cp, config, { name: domain, domain, plan: 'enterprise' })
  const org = cp.orgs.get(created.organization_id)!
  await cp.orgs.put(org.id, { ...org, rate_limit_per_minute: BENCH_RATE_LIMIT })
  const key = buildApiKey({ orgId: org.id, domainId: created.domain_id, name: 'bench', permissions: ['send'], environment: 'live' })
  await cp.apiKeys.put(key.record.id, key.record)
  return key.value
}

function ready (port: number, key: string, domain: string): void {
  process.stdout.write(JSON.stringify({ port, key, domain }) + '\n')
}

async function serveFull (natsUrl: string, redisUrl: string): Promise<() => Promise<void>> {
  const config = configFor(natsUrl, redisUrl)
  const proc = await startOutbox(config, pino({ level: 'silent' }))
  const domain = 'bench-full.test'
  ready(proc.gateway!.port, await benchOrg(proc.cp, config, domain), domain)
  return async () => { await proc.stop() }
}

/** What the Fastify and floor servers share with the gateway's send path: connections, rate limiter, publisher. */
async function sendPathParts (natsUrl: string, redisUrl: string, name: string): Promise<{
  config: Config, nc: NatsConnection, redis: Redis, limiter: RateLimiter, publisher: JsPublisher, close: () => Promise<void>
}> {
  const config = configFor(natsUrl, redisUrl)
  const nc = await connectNats(config.nats.servers, name)
  const redis = connectRedis(config.redis.url, name)
  await redisReady(redis)
  await ensureStreams(nc, streamSettings(config))
  const limiter = new RateLimiter(redis)
  const publisher = new JsPublisher(nc, config.nats.publishTimeoutMs)
  return { config, nc, redis, limiter, publisher, close: async () => { await nc.close(); redis.disconnect() } }
}

async function serveFastify (natsUrl: string, redisUrl: string): Promise<() => Promise<void>> {
  const { config, nc, redis, limiter, publisher, close } = await sendPathParts(natsUrl, redisUrl, 'bench-fastify')
  const cp = await ControlPlane.open(nc, { replicas: 1 })
  const store = new MessageStore(redis)
  const idempotency = new IdempotencyStore(redis, await IdempotencyLedger.open(nc, 1, IDEMPOTENCY_TTL_MS, config.nats.publishTimeoutMs))
  const validator = Compile(SendRequest)
  const app = Fastify({ logger: false })
  // The raw body is kept for the Idempotency-Key fingerprint, as the Outbox gateway does.
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    (request as unknown as { rawBody: Buffer }).rawBody = body as Buffer
    try { done(null, JSON.parse((body as Buffer).toString('utf8'))) } catch (err) { done(err as Error) }
  })
  app.setValidatorCompiler(() => (data: unknown) => validator.Check(data) ? { value: data } : { error: new Error('invalid body') })
  app.setErrorHandler((err, _request, reply) => {
    const e = err instanceof ApiError ? err : new ApiError('validation_error', (err as Error).message)
    void reply.code(e.status).send(e.toJSON())
  })
  app.post('/v1/messages/send', { schema: { body: SendRequest } }, async (request, reply) => {
    const now = Date.now()
    const auth = authenticate(cp, request.headers.authorization ?? '', now)
    if (!hasPermission(auth.key, 'send')) throw new ApiError('forbidden')
    const limit = planLimit(auth.org, config.plans.enterpriseRateLimit)
    const d = await limiter.take(REDIS_KEYS.rateLimit(auth.key.id, limit), limit)
    void reply
      .header('RateLimit-Limit', String(limit))
      .header('RateLimit-Remaining', String(d.remaining))
      .header('RateLimit-Reset', String(d.resetS))
    if (!d.allowed) throw new ApiError('rate_limited', undefined, { retryAfter: d.retryAfterS })
    const idemKey = request.headers['idempotency-key']
    const rawBody = (request as unknown as { rawBody: Buffer }).rawBody
    const claim = typeof idemKey === 'string'
      ? await idempotency.claim(auth.org.id, checkIdempotencyKey(idemKey), fingerprint('/v1/messages/send', rawBody), newId('req'))
      : undefined
    if (claim !== undefined && claim.state !== 'claimed') throw new ApiError('conflict')
    const problems = new Problems()
    const p = prepareMessage(request.body as SendRequest, auth, cp, now, new Date(now).toISOString(), '', problems)
    problems.throwIfAny()
    if (!isPrepared(p)) throw new ApiError('recipient_suppressed')
    try {
      const subject = outboundSubject(shardOf(p.msg.id, config.engine.shards))
      await publisher.publish(subject, Buffer.from(JSON.stringify(p.msg)), { msgID: p.msg.id })
    } catch (err) {
      throw new ApiError('service_unavailable', undefined, { cause: err, retryAfter: 1 })
    }
    store.recordQueued(p.msg, p.status).catch(() => {})
    const json = JSON.stringify({ id: p.msg.id, status: p.status, created_at: p.msg.created_at })
    if (claim !== undefined) await claim.complete(202, json)
    return await reply.code(202).type('application/json').send(json)
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const domain = 'bench-fastify.test'
  ready((app.server.address() as { port: number }).port, await benchOrg(cp, config, domain), domain)
  return async () => {
    await app.close()
    cp.close()
    await close()
  }
}

type Answer = readonly [status: string, body: string]
const BAD_JSON: Answer = ['400 Bad Request', '{"error":{"code":"validation_error","message":"invalid JSON"}}']

/**
 * A uWS server on a free port answering POST /v1/messages/send with what `handle` makes of the whole body.
 * A synchronous handler adds no promise per request, so the bare server stays a bare baseline.
 */
async function listenUws (handle: (body: Buffer) => Answer | Promise<Answer>): Promise<uWS.us_listen_socket> {
  const app = uWS.App()
  app.post('/v1/messages/send', (res) => {
    let aborted = false
    res.onAborted(() => { aborted = true })
    const chunks: Buffer[] = []
    res.onData((chunk, isLast) => {
      chunks.push(Buffer.from(chunk.slice(0)))
      if (!isLast) return
      const write = ([status, out]: Answer): void => {
        if (!aborted) res.cork(() => { res.writeStatus(status).writeHeader('Content-Type', 'application/json').end(out) })
      }
      const answer = handle(Buffer.concat(chunks))
      if (answer instanceof Promise) answer.then(write, () => { write(['503 Service Unavailable', '{}']) })
      else write(answer)
    })
  })
  return await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    app.listen('127.0.0.1', 0, (s) => { if (s === false) reject(new Error('cannot listen')); else resolve(s) })
  })
}

async function serveBare (): Promise<() => Promise<void>> {
  const accepted: Answer = ['202 Accepted', '{"id":"msg_bare","status":"queued"}']
  const socket = await listenUws((body) => {
    try {
      JSON.parse(body.toString('utf8'))
      return accepted
    } catch {
      return BAD_JSON
    }
  })
  ready(uWS.us_socket_local_port(socket), 'ob_live_bare0000000000000000', 'bench-bare.test')
  return async () => { uWS.us_listen_socket_close(socket) }
}

async function serveFloor (natsUrl: string, redisUrl: string): Promise<() => Promise<void>> {
  const { config, limiter, publisher, close } = await sendPathParts(natsUrl, redisUrl, 'bench-floor')
  const bucket = REDIS_KEYS.rateLimit('key_floor', BENCH_RATE_LIMIT)
  const socket = await listenUws(async (body) => {
    try {
      JSON.parse(body.toString('utf8'))
    } catch {
      return BAD_JSON
    }
    const d = await limiter.take(bucket, BENCH_RATE_LIMIT)
    if (!d.allowed) return ['429 Too Many Requests', '{}']
    const id = newId('msg')
    await publisher.publish(outboundSubject(shardOf(id, config.engine.shards)), body, { msgID: id })
    return ['202 Accepted', `{"id":"${id}","status":"queued"}`]
  })
  ready(uWS.us_socket_local_port(socket), 'ob_live_floor000000000000000', 'bench-floor.test')
  return async () => {
    uWS.us_listen_socket_close(socket)
    await close()
  }
}

async function serveFastifyBare (): Promise<() => Promise<void>> {
  const app = Fastify({ logger: false })
  app.post('/v1/messages/send', async (_request, reply) => await reply.code(202).send({ id: 'msg_bare', status: 'queued' }))
  await app.listen({ host: '127.0.0.1', port: 0 })
  ready((app.server.address() as { port: number }).port, 'ob_live_bare0000000000000000', 'bench-bare.test')
  return async () => { await app.close() }
}

/** Runs one target until SIGTERM. */
export async function serve (target: Target, natsUrl: string, redisUrl: string): Promise<void> {
  const stop = target === 'full'
    ? await serveFull(natsUrl, redisUrl)
    : target === 'fastify'
      ? await serveFastify(natsUrl, redisUrl)
      : target === 'floor' ? await serveFloor(natsUrl, redisUrl) : target === 'fastify-bare' ? await serveFastifyBare() : await serveBare()
  process.once('SIGTERM', () => {
    const hardExit = setTimeout(() => process.exit(0), 3000)
    hardExit.unref()
    void stop().finally(() => process.exit(0))
  })
}
