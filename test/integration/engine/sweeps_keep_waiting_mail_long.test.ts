// test-group: long-wait — the default retry schedule's first steps (60 s, 120 s) and sends scheduled up to 4.5 minutes ahead
import { test, after } from 'node:test'
import { closeAgent } from '../faults/fault_env.ts'
import { runWaitingMail } from './waiting_mail.ts'

after(async () => { await closeAgent() })

// Minutes long: the default retry schedule's first two steps, scheduled sends up to 4.5 minutes ahead.
test('minutes of waiting mail (retries 60 s and 120 s apart, sends scheduled 1.5 to 4.5 min ahead) through sweeps: ' +
  'each message delivered once, ends delivered', { timeout: 480_000 }, async (t) => {
  await runWaitingMail(t, {
    retryScheduleS: [60, 120], deferred: 3, scheduledAheadS: [90, 150, 210, 270], ordinaryEveryMs: 500, forcedSweepEveryMs: 5000
  })
})
