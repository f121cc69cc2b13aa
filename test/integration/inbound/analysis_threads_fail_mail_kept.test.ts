import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import type { Transporter } from 'nodemailer'
import { TestOutbox } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { inboundClient, addRoute } from '../../helpers/inbound.ts'
import { eventually } from '../../helpers/waiting.ts'
import { jetstreamManager } from '@nats-io/jetstream'
import { INBOUND_MAX_ATTEMPTS } from '../../../inbound/consumer.ts'
import { CONSUMER_INBOUND, NS_PER_MS, STREAM_INBOUND } from '../../../protocol/mod.ts'

/**
 * Mail received while the analysis threads cannot load (an installation broken under a running process): the
 * sender gets its 250, the job keeps coming back for longer than a failing job is retried, and once the threads
 * load again the mail becomes its event, once. The threads load analysis_fails_thread.cts (`broken` file).
 */
const dir = mkdtempSync(join(tmpdir(), 'outbox-analysis-kept-'))
// the threads' environment is the process's when a pool starts them
process.env.OB_TEST_THREAD_DIR = dir
let dns: DnsServer | undefined
let ob: TestOutbox | undefined
let events: EventReader | undefined
let smtp: Transporter | undefined
after(async () => {
  smtp?.close()
  events?.close()
  await ob?.close()
  await dns?.close()
  rmSync(dir, { recursive: true, force: true })
})

test('mail received while the analysis threads cannot load is kept past the attempts a failing job gets, ' +
  'and becomes its event once they load', { timeout: 120_000 }, async () => {
  writeFileSync(join(dir, 'broken'), '')
  const logs: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(JSON.parse(String(chunk)) as Record<string, unknown>); cb() } })
  dns = await DnsServer.start({})
  ob = await TestOutbox.start({
    env: { OB_DNS_SERVERS: dns.address, OB_ROLE: 'inbound' },
    log: { level: 'warn', stream },
    // the job comes back after 100 ms instead of 1 s, 5 s, 30 s, then every minute, so it passes the give-up
    // point in seconds
    inbound: { analysisThreadEntry: new URL('./analysis_fails_thread.cjs', import.meta.url), retryDelaysMs: [100] }
  })
  // The same for the server's own waits, which nats-server 2.9 follows instead of a nak's delay after the first.
  const jsm = await jetstreamManager(ob.proc.nc)
  await jsm.consumers.update(STREAM_INBOUND, CONSUMER_INBOUND, { ack_wait: 300 * NS_PER_MS, backoff: [300 * NS_PER_MS] })
  const org = await ob.org()
  const route = await addRoute(ob, org, `support@${org.domain}`, false)
  events = await EventReader.open(ob.proc.nc, org.orgId)
  smtp = inboundClient(ob)

  const info = await smtp.sendMail({ from: 'alice@sender.test', to: `support@${org.domain}`, subject: 'Kept', text: 'Hello' })
  const id = /queued as (msg_[0-9a-z]{26})/.exec(info.response ?? '')?.[1]
  assert.ok(id !== undefined, info.response)

  const attempts = (): number[] => logs
    .filter((l) => l.id === id && l.msg === 'inbound message not analysed (the analysis threads failed); will retry')
    .map((l) => l.attempt as number)
  const givenUp = (): Array<Record<string, unknown>> =>
    logs.filter((l) => String(l.msg).startsWith('inbound message could not be processed'))
  await eventually(() => Math.max(0, ...attempts()) > INBOUND_MAX_ATTEMPTS || givenUp().length > 0,
    'more attempts than a failing job gets', 60_000, 100)
  assert.deepEqual(givenUp(), [])
  rmSync(join(dir, 'broken'))

  const [received] = await events.waitFor('inbound.received', 1, 60_000)
  assert.equal((received!.data as { message_id: string }).message_id, id)
  assert.equal((received!.data as { route_id: string }).route_id, route.id)
  assert.equal((received!.data as { subject: string }).subject, 'Kept')
  await events.settle()
  assert.equal(events.of('inbound.received').length, 1, 'one event')
  assert.deepEqual(givenUp(), [])
  const failed = logs.filter((l) => l.code === 'engine_thread_failed')
  assert.equal(failed.length, 1, 'logged once a minute at most')
  assert.equal(failed[0]!.pool, 'inbound analysis')
  assert.match(String((failed[0]!.err as { message?: string }).message), /this analysis thread entry cannot be loaded/)
})
