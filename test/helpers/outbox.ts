import { pino } from 'pino'
import { Agent, fetch as undiciFetch } from 'undici'
import { loadConfig, type Plan } from '../../config/mod.ts'
import { startOutbox, type OutboxProcess } from '../../cli/outbox_process.ts'
import type { InboundTestOptions } from '../../inbound/mod.ts'
import { createOrganization, buildApiKey } from '../../gateway/control/orgs.ts'
import type { Permission } from '../../protocol/mod.ts'
import { ServerProcess } from './servers.ts'

export interface TestOrg { orgId: string, domainId: string, domain: string, adminKey: string }

export interface HttpResult {
  status: number
  headers: { get: (name: string) => string | null }
  body: any
  text: string
}

let counter = 0

/**
 * An Outbox process on its own NATS and Redis (spawned for the test file), serving HTTP on a free port.
 * `env` overrides settings exactly as the environment would.
 */
export class TestOutbox {
  // Its own agent, so keep-alive sockets close with the test instead of holding the process for seconds.
  readonly agent = new Agent({ keepAliveTimeout: 1000 })

  private constructor (
    readonly proc: OutboxProcess, readonly nats: ServerProcess, readonly redisServer: ServerProcess, private readonly ownServers: boolean
  ) {}

  /**
   * `log` captures the process's pino output at the given level (default: OB_TEST_LOG, else silent, to stdout).
   * `shardThreadEntry` is the file the engine's shard threads load instead of engine/actor/thread.cts; `inbound`
   * changes the inbound part (the file its analysis threads load, its retry delays).
   */
  static async start (opts: {
    env?: Record<string, string>, nats?: ServerProcess, redis?: ServerProcess, log?: { level: string, stream: NodeJS.WritableStream },
    shardThreadEntry?: URL, inbound?: InboundTestOptions
  } = {}): Promise<TestOutbox> {
    const nats = opts.nats ?? await ServerProcess.nats()
    const redis = opts.redis ?? await ServerProcess.redis()
    const config = loadConfig({
      NATS_URL: nats.url,
      REDIS_URL: redis.url,
      OB_HTTP_PORT: '0',
      OB_SMTP_INBOUND_PORT: '0',
      OB_SMTP_SUBMISSION_PORT: '0',
      OB_METRICS_PORT: '0',
      OB_DOMAIN_VERIFICATION: 'off',
      OB_SHUTDOWN_TIMEOUT_MS: '2000',
      ...opts.env
    })
    const log = opts.log !== undefined
      ? pino({ level: opts.log.level }, opts.log.stream)
      : pino({ level: process.env.OB_TEST_LOG ?? 'silent' })
    const proc = await startOutbox(config, log, {
      ...(opts.shardThreadEntry !== undefined ? { shardThreadEntry: opts.shardThreadEntry } : {}),
      ...(opts.inbound !== undefined ? { inbound: opts.inbound } : {})
    })
    return new TestOutbox(proc, nats, redis, opts.nats === undefined)
  }

  get baseUrl (): string {
    return `http://127.0.0.1:${this.proc.gateway!.port}`
  }

  /** A fresh organisation with a verified domain and an admin key. */
  async org (plan: Plan = 'pro'): Promise<TestOrg> {
    const domain = `org${process.pid}x${++counter}.test`
    const created = await createOrganization(this.proc.cp, this.proc.config, { name: domain, domain, plan })
    return { orgId: created.organization_id, domainId: created.domain_id, domain, adminKey: created.api_key }
  }

  /** A key with exactly these permissions on the org's domain, written straight to the control plane. */
  async key (org: TestOrg, permissions: Permission[], environment: 'live' | 'test' = 'live'): Promise<string> {
    const k = buildApiKey({ orgId: org.orgId, domainId: org.domainId, name: 'test', permissions, environment })
    await this.proc.cp.apiKeys.put(k.record.id, k.record)
    return k.value
  }

  async request (
    method: string, path: string, opts: { key?: string, body?: unknown, rawBody?: string | Buffer, headers?: Record<string, string> } = {}
  ): Promise<HttpResult> {
    const headers: Record<string, string> = { ...opts.headers }
    if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`
    let body: string | Buffer | undefined = opts.rawBody
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await undiciFetch(this.baseUrl + path, { method, headers, dispatcher: this.agent, ...(body !== undefined ? { body } : {}) })
    const text = await res.text()
    let parsed: unknown
    try { parsed = text === '' ? undefined : JSON.parse(text) } catch { parsed = undefined }
    return { status: res.status, headers: res.headers, body: parsed, text }
  }

  async close (): Promise<void> {
    await this.proc.stop()
    await this.agent.close().catch(() => {})
    if (this.ownServers) {
      await this.nats.dispose()
      await this.redisServer.dispose()
    }
  }
}
