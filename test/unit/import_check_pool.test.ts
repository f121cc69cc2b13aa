import { test } from 'node:test'
import assert from 'node:assert/strict'
import { pino } from 'pino'
import { ApiError } from '../../protocol/mod.ts'
import { IMPORT_CHECK_MAX_QUEUE, ImportCheckPool } from '../../gateway/import_check_pool.ts'
import { decodeEntries } from '../../gateway/control/suppression_import.ts'

/** Imports are read and checked on a thread; more waiting than the pool takes is 503 with a Retry-After, never a queue. */
test('the import-check thread answers each import, refuses bad bodies as the route does, and refuses a crowd', async () => {
  const pool = new ImportCheckPool(pino({ level: 'silent' }))
  try {
    const checked = await pool.check(Buffer.from('email,stream\na@example.com,news\nb@example.com,promo\n'), 'text/csv', ['news'])
    assert.deepEqual(await decodeEntries(checked.entries), [{ email: 'a@example.com', reason: 'manual', stream: 'news' }])
    assert.equal(checked.summary.refused_count, 1)
    await assert.rejects(pool.check(Buffer.from('name\nx\n'), 'text/csv', []), (err: unknown) =>
      err instanceof ApiError && err.code === 'validation_error' && err.field === 'header')

    const body = Buffer.from('email\n' + Array.from({ length: 50_000 }, (_, i) => `user${i}@example.com`).join('\n'))
    const crowd = Array.from({ length: IMPORT_CHECK_MAX_QUEUE + 4 }, async () => await pool.check(body, 'text/csv', []))
    const results = await Promise.allSettled(crowd)
    const refused = results.filter((r) => r.status === 'rejected')
    assert.ok(refused.length >= 1, 'a crowd of imports beyond the queue is refused')
    for (const r of refused) {
      const err = (r as PromiseRejectedResult).reason as ApiError
      assert.deepEqual([err.code, err.retryAfter], ['service_unavailable', 5])
    }
    for (const r of results) if (r.status === 'fulfilled') assert.equal(r.value.summary.refused_count, 0)
  } finally {
    await pool.close()
  }
})
