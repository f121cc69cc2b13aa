import { after } from 'node:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Transporter } from 'nodemailer'
import { jetstreamManager } from '@nats-io/jetstream'
import { TestOutbox } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { addRoute, inboundClient } from '../../helpers/inbound.ts'
import { CONSUMER_INBOUND, NS_PER_MS, STREAM_INBOUND, type RouteRecord } from '../../../protocol/mod.ts'
import type { TestOrg } from '../../helpers/outbox.ts'

/** What a test of failing inbound processing works with: one Outbox, one organisation with a route, its events. */
export interface FailingAnalysisWorld {
  ob: TestOutbox
  org: TestOrg
  route: RouteRecord
  events: EventReader
  smtp: Transporter
}

/**
 * A test file whose inbound analysis threads load analysis_fails_thread.cts, switched by files in a directory of
 * its own (`switchOn('broken' | 'die' | 'reject')`). `start` runs an Outbox whose failed inbound jobs come back
 * after 100 ms instead of 1 s, 5 s, 30 s, then every minute (the server's own waits too, which nats-server 2.9
 * follows instead of a nak's delay after the first), so a job passes the give-up point in seconds. Everything is
 * closed after the file's tests.
 */
export function failingAnalysis (prefix: string): {
  switchOn: (name: string) => void
  switchOff: (name: string) => void
  start: (opts?: { env?: Record<string, string>, log?: { level: string, stream: NodeJS.WritableStream } }) => Promise<FailingAnalysisWorld>
} {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  // the threads' environment is the process's when a pool starts them
  process.env.OB_TEST_THREAD_DIR = dir
  let dns: DnsServer | undefined
  let world: FailingAnalysisWorld | undefined
  after(async () => {
    world?.smtp.close()
    world?.events.close()
    await world?.ob.close()
    await dns?.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    switchOn: (name) => { writeFileSync(join(dir, name), '') },
    switchOff: (name) => { rmSync(join(dir, name), { force: true }) },
    async start (opts = {}) {
      dns = await DnsServer.start({})
      const ob = await TestOutbox.start({
        env: { OB_DNS_SERVERS: dns.address, ...opts.env },
        ...(opts.log !== undefined ? { log: opts.log } : {}),
        inbound: { analysisThreadEntry: new URL('./analysis_fails_thread.cjs', import.meta.url), retryDelaysMs: [100] }
      })
      const jsm = await jetstreamManager(ob.proc.nc)
      await jsm.consumers.update(STREAM_INBOUND, CONSUMER_INBOUND, { ack_wait: 300 * NS_PER_MS, backoff: [300 * NS_PER_MS] })
      const org = await ob.org()
      const route = await addRoute(ob, org, `support@${org.domain}`, false)
      world = { ob, org, route, events: await EventReader.open(ob.proc.nc, org.orgId), smtp: inboundClient(ob) }
      return world
    }
  }
}
