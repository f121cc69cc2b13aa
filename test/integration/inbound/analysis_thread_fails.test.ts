import { test, after, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { pino } from 'pino'
import { AnalysisPool, AnalysisUnavailable } from '../../../inbound/analysis_pool.ts'
import type { AnalysisRequest } from '../../../inbound/analysis.ts'

/**
 * The inbound analysis pool when its threads fail: what each analysis answers (so the consumer hands the job
 * back), what is logged, and that closing returns. The threads load analysis_fails_thread.cts, switched by files.
 */
const dir = mkdtempSync(join(tmpdir(), 'outbox-analysis-thread-'))
// the thread's environment is the process's when the pool starts it
process.env.OB_TEST_THREAD_DIR = dir
after(() => { rmSync(dir, { recursive: true, force: true }) })
const flag = (name: 'broken' | 'die', on: boolean): void => {
  if (on) writeFileSync(join(dir, name), '')
  else rmSync(join(dir, name), { force: true })
}

function poolOn (t: TestContext): { pool: AnalysisPool, logs: Array<Record<string, unknown>> } {
  const logs: Array<Record<string, unknown>> = []
  const log = pino({ level: 'warn' }, new Writable({
    write (chunk, _enc, cb) { logs.push(JSON.parse(String(chunk)) as Record<string, unknown>); cb() }
  }))
  const pool = new AnalysisPool([], log, { threads: 2, entry: new URL('./analysis_fails_thread.cjs', import.meta.url) })
  t.after(async () => { await pool.close() })
  return { pool, logs }
}

function request (subject: string): AnalysisRequest {
  const raw = Buffer.from(`From: alice@sender.test\r\nTo: support@example.test\r\nSubject: ${subject}\r\n\r\nHello\r\n`)
  const job = {
    id: `msg_${subject}`, received_at: new Date().toISOString(), mail_from: 'alice@sender.test', rcpt_to: ['support@example.test'],
    remote_ip: '127.0.0.1', helo: 'sender.test', size: raw.length
  }
  return { raw, job, routed: false, withContent: false, reports: false }
}

const unavailable = (err: unknown): boolean => err instanceof AnalysisUnavailable && err.code === 'inbound_analysis_unavailable'

test('analysis threads that never load: every analysis fails as unavailable instead of waiting, ' +
  'and the failure is logged once with its code', { timeout: 30_000 }, async (t) => {
  flag('broken', true)
  t.after(() => { flag('broken', false) })
  const { pool, logs } = poolOn(t)
  // the first thread takes the task and fails with it; the one piscina starts in its place fails before it is
  // ready, which leaves the pool with no thread: later analyses would wait for ever without a new pool
  await assert.rejects(pool.analyze(request('never0')), unavailable)
  await eventually(() => logs.some((l) => l.code === 'engine_thread_failed'), 'the first thread failure logged')
  for (const i of [1, 2]) {
    await assert.rejects(pool.analyze(request(`never${i}`)), unavailable)
    await nothingHappensFor(1200) // the next thread's failure would be logged by now, were it not counted instead
  }
  const failed = logs.filter((l) => l.code === 'engine_thread_failed')
  assert.equal(failed.length, 1, 'later failures within the minute are counted, not logged')
  assert.equal(failed[0]!.pool, 'inbound analysis')
  assert.match(String((failed[0]!.err as { message?: string }).message), /this analysis thread entry cannot be loaded/)
})

test('closing an analysis pool whose threads never loaded returns', { timeout: 30_000 }, async (t) => {
  flag('broken', true)
  t.after(() => { flag('broken', false) })
  const { pool, logs } = poolOn(t)
  await assert.rejects(pool.analyze(request('close')), unavailable)
  // logged when the second thread failed before it was ready: the pool has no thread left
  await eventually(() => logs.some((l) => l.code === 'engine_thread_failed'), 'the thread failure logged')
  // the empty task closing runs first waits for a thread that has loaded; none ever does
  await pool.close()
})

test('an analysis thread that ends in the middle of a task, and whose replacement cannot load: ' +
  'the messages fail as unavailable instead of waiting, and are analysed once threads load again', { timeout: 60_000 }, async (t) => {
  const { pool, logs } = poolOn(t)
  assert.equal((await pool.analyze(request('before'))).subject, 'before')

  // an installation rewritten under the running pool: the thread ends, the next ones cannot load
  flag('die', true)
  flag('broken', true)
  t.after(() => { flag('die', false); flag('broken', false) })
  const batch = await Promise.allSettled([pool.analyze(request('batch1')), pool.analyze(request('batch2'))])
  for (const r of batch) assert.ok(r.status === 'rejected' && unavailable(r.reason), JSON.stringify(r))
  assert.match(String(((batch[0] as PromiseRejectedResult).reason as Error).cause), /ended in the middle of a task/)
  await eventually(() => logs.some((l) => l.code === 'engine_thread_failed'), 'the thread failure logged')
  await assert.rejects(pool.analyze(request('meanwhile')), unavailable)

  flag('die', false)
  flag('broken', false)
  const after = await eventually(async () => {
    try {
      return await pool.analyze(request('after'))
    } catch (err) {
      assert.ok(unavailable(err), String(err))
      return undefined
    }
  }, 'an analysis once threads load again', 40_000, 200)
  assert.equal(after.subject, 'after')
})
