// test-group: long-wait — retries 15 s and 30 s apart and sends scheduled up to 90 s ahead
import { test, after } from 'node:test'
import { closeAgent } from '../faults/fault_env.ts'
import { runWaitingMail } from './waiting_mail.ts'

after(async () => { await closeAgent() })

test('deferred and scheduled mail among ordinary mail on every shard, sweeps every second: ' +
  'each message delivered once, ends delivered', { timeout: 240_000 }, async (t) => {
  await runWaitingMail(t, {
    retryScheduleS: [15, 30], deferred: 2, scheduledAheadS: [65, 75, 90], ordinaryEveryMs: 250, forcedSweepEveryMs: 1500
  })
})
