import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { eventually } from '../../helpers/waiting.ts'
import { INBOUND_MAX_ATTEMPTS } from '../../../inbound/consumer.ts'
import { failingAnalysis } from './failing_analysis_world.ts'

/**
 * Mail received while the analysis threads cannot load (an installation broken under a running process): the
 * sender gets its 250, the job keeps coming back for longer than a failing job is retried, and once the threads
 * load again the mail becomes its event, once. The threads load analysis_fails_thread.cts (`broken` file).
 */
const analysis = failingAnalysis('outbox-analysis-kept-')

test('mail received while the analysis threads cannot load is kept past the attempts a failing job gets, ' +
  'and becomes its event once they load', { timeout: 120_000 }, async () => {
  analysis.switchOn('broken')
  const logs: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(JSON.parse(String(chunk)) as Record<string, unknown>); cb() } })
  const { org, route, events, smtp } = await analysis.start({ env: { OB_ROLE: 'inbound' }, log: { level: 'warn', stream } })

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
  analysis.switchOff('broken')

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
