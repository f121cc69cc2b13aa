import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  webhookBatchJson, webhookJobJson, webhookJobsOf, type StoredWebhookJob, type WebhookJob, type WebhookJobRef
} from '../../stores/webhooks/mod.ts'

function job (i: number, extra: Partial<WebhookJob> = {}): WebhookJob {
  return {
    event: { id: `evt_${i}`, type: 'delivered', timestamp: '2026-01-01T00:00:00.000Z', data: { n: i } },
    event_seq: 1000 + i,
    org_id: 'org_1',
    webhook_id: 'wh_1',
    attempt: 1,
    due_at: 1_700_000_000_000 + i,
    created_at: 1_700_000_000_000 + i,
    ...extra
  }
}

/** What a job naming its event reads back as. */
function asRef (j: WebhookJob): WebhookJobRef {
  return {
    event_seq: j.event_seq!, event_id: j.event.id, org_id: j.org_id, webhook_id: j.webhook_id, attempt: j.attempt, due_at: j.due_at,
    created_at: j.created_at
  }
}

test('parked references of one webhook are stored in columns and read back as the same references', () => {
  const jobs = [job(1), job(2, { attempt: 3, due_at: 1_700_000_060_000 }), job(3, { event: { ...job(3).event, id: 'evt_"odd"\\' } })]
  const json = webhookBatchJson(jobs, [undefined, undefined, undefined])
  assert.ok(json.includes('"refs"') && !json.includes('"event"'), 'no event is carried')
  const perJob = jobs.map((j) => webhookJobJson(j)).join(',').length / jobs.length
  assert.ok(json.length / jobs.length < perJob / 2,
    `about a third of the bytes of separate references (${json.length / jobs.length} vs ${perJob} per job)`)
  assert.deepEqual(webhookJobsOf(JSON.parse(json)), jobs.map(asRef))
})

test('a batch with a job carrying its event keeps the job list form', () => {
  const test = job(4, { test: true, event_seq: undefined })
  delete test.event_seq
  const jobs: StoredWebhookJob[] = [job(1), test]
  const json = webhookBatchJson(jobs, [undefined, webhookJobJson(test)])
  assert.ok(json.startsWith('{"jobs":['))
  assert.deepEqual(webhookJobsOf(JSON.parse(json)), [asRef(job(1)), test])
  assert.deepEqual(webhookJobsOf(JSON.parse(webhookBatchJson([job(5)], [undefined]))), [asRef(job(5))], 'one job is a plain job message')
})

test('a malformed batch of references is refused, not half read', () => {
  const good = JSON.parse(webhookBatchJson([job(1), job(2)], [undefined, undefined])) as { refs: unknown[] }
  assert.equal(webhookJobsOf(good).length, 2)
  for (const bad of [
    { ...good, refs: [] },
    { ...good, refs: [[1, 'evt_1', 1, 0]] },
    { ...good, refs: [[1, 'evt_1', 1, 0, 'x']] },
    { ...good, webhook_id: 7 },
    { ...good, base: undefined }
  ]) assert.throws(() => webhookJobsOf(bad), /not a webhook job/)
})
