import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from '@nats-io/transport-node'
import { loadConfig } from '../config/mod.ts'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { ensureStreams } from '../stores/clients/mod.ts'
import { streamSettings } from '../protocol/mod.ts'
import { createOrganization } from '../gateway/control/orgs.ts'
import { ServerProcess } from '../test/helpers/servers.ts'
import { spawnCli } from '../test/helpers/cli.ts'
import { freePort } from '../test/helpers/ports.ts'
import { untilReady } from './e2e_world.ts'

/**
 * Outbox for the side-by-side benchmark, as it runs in production: `node dist/cli/main.js start` (gateway with
 * HTTP and SMTP submission, engine, inbound in one process) on a nats-server and a redis-server of its own, with
 * one organisation on the test domain (DKIM key made at its creation, as always) relaying to the bench's sink.
 * `kill()` is the crash of the kill phase: SIGKILL to the Outbox process and nats-server at once; Redis keeps
 * running (it holds the read model and rate limits, not the queue). `restart()` brings both back on their data.
 */
export interface OutboxSystem {
  baseUrl: string
  submissionPort: number
  key: string
  domain: string
  pids: () => { outbox: number | undefined, nats: number | undefined, redis: number | undefined }
  kill: () => Promise<void>
  restart: () => Promise<void>
  close: () => Promise<void>
}

export async function startOutboxSystem (opts: { sinkUrl: string, domain: string }): Promise<OutboxSystem> {
  const [nats, redis] = await Promise.all([ServerProcess.nats(), ServerProcess.redis()])
  const dataDir = mkdtempSync(join(tmpdir(), 'outbox-peers-'))
  let outbox: ChildProcess | undefined
  const running = (c: ChildProcess | undefined): c is ChildProcess => c !== undefined && c.exitCode === null && c.signalCode === null
  const stopOutbox = async (signal: NodeJS.Signals): Promise<void> => {
    const o = outbox
    if (!running(o)) return
    const exited = new Promise<void>((resolve) => o.once('exit', () => resolve()))
    o.kill(signal)
    const timer = setTimeout(() => o.kill('SIGKILL'), 20_000)
    await exited
    clearTimeout(timer)
  }
  const close = async (): Promise<void> => {
    await stopOutbox('SIGTERM')
    await Promise.all([nats.dispose(), redis.dispose()])
    rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    const env = { NATS_URL: nats.url, REDIS_URL: redis.url, OB_DOMAIN_VERIFICATION: 'off' }
    const config = loadConfig(env)
    const nc = await connect({ servers: nats.url })
    await ensureStreams(nc, streamSettings(config))
    const cp = await ControlPlane.open(nc, { replicas: 1 })
    const org = await createOrganization(cp, config, { name: 'peers', domain: opts.domain, plan: 'enterprise' })
    cp.close()
    await nc.close()
    const [httpPort, inboundPort, submissionPort] = [await freePort(), await freePort(), await freePort()]
    const baseUrl = `http://127.0.0.1:${httpPort}`
    const start = async (): Promise<void> => {
      outbox = spawnCli(['start'], {
        ...env,
        OB_SMTP_RELAY: opts.sinkUrl,
        OB_HTTP_PORT: String(httpPort),
        OB_PUBLIC_URL: baseUrl,
        OB_SMTP_INBOUND_PORT: String(inboundPort),
        OB_SMTP_SUBMISSION_PORT: String(submissionPort),
        OB_DATA_DIR: dataDir,
        OB_ENTERPRISE_RATE_LIMIT: '1000000',
        OB_LOG_LEVEL: 'error'
      }).child
      await untilReady(baseUrl, outbox)
    }
    await start()
    return {
      baseUrl,
      submissionPort,
      key: org.api_key,
      domain: opts.domain,
      pids: () => ({ outbox: outbox?.pid, nats: nats.pid, redis: redis.pid }),
      kill: async () => {
        // Both signals leave in the same turn: neither process sees the other go first.
        await Promise.all([stopOutbox('SIGKILL'), nats.stop('SIGKILL')])
      },
      restart: async () => {
        await nats.start()
        await start()
      },
      close
    }
  } catch (err) {
    await close()
    throw err
  }
}
