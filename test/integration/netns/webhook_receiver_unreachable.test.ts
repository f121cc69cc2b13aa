// test-group: multi-host — the webhook receiver's host is unreachable for 2 minutes, then retries bring every owed event
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { netnsUnavailable } from '../../helpers/netns/net.ts'
import { Lab } from '../../helpers/netns/lab.ts'
import { MailFlow } from '../../helpers/netns/mail_flow.ts'
import { WebhookHost } from '../../helpers/netns/webhook_host.ts'
import { testCa } from '../../helpers/https_receiver.ts'
import { putWebhook } from '../../helpers/webhooks.ts'
import { eventually, nothingHappensFor, sleepUntil } from '../../helpers/waiting.ts'

const OUTAGE_MS = 120_000
const TIMEOUT_MS = 5000
// attempts 5, 15, 35, 65, 125, 185, 245 s after the first: past the outage with room to spare
const SCHEDULE = '5,10,20,30,60,60,60'

/**
 * The `delivered` webhook of an organisation points at an HTTPS receiver on its own host (w1); mail flows, and the
 * receiver's host is cut off for 2 minutes, then healed. Every accepted message reaches the sink, and the receiver
 * gets the `delivered` event of every one of them: those owed from before and during the outage by the retries.
 * Repeated events ≤ the requests it received in the webhook timeout (5 s) before the cut: only a request in
 * flight then can have its answer swallowed by the cut and be sent again.
 */
test('a webhook receiver unreachable for minutes gets every owed event once it is back', { skip: netnsUnavailable() }, async (t) => {
  let rx: WebhookHost | undefined
  const lab = await Lab.start({
    engines: 2,
    env: {
      OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: SCHEDULE,
      OB_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS)
    },
    onReady: async (l) => { rx = await WebhookHost.start(l.net.addHost('w1', 51)) }
  })
  let flow: MailFlow | undefined
  try {
    const receiver = rx!
    await putWebhook(lab.admin, lab.org, { url: receiver.url(), events: ['delivered'] })
    const delivered = (): Map<string, number> => {
      const byEvent = new Map<string, number>()
      for (const r of receiver.requests) {
        const e = JSON.parse(r.body) as { id: string, type: string, message_id?: string }
        if (e.type === 'delivered') byEvent.set(e.id, (byEvent.get(e.id) ?? 0) + 1)
      }
      return byEvent
    }
    const messagesWithEvent = (): Set<string> => new Set(receiver.requests
      .map((r) => JSON.parse(r.body) as { type: string, message_id?: string, data?: { message_id?: string } })
      .filter((e) => e.type === 'delivered').map((e) => e.message_id ?? e.data?.message_id ?? ''))

    flow = MailFlow.start(lab.gatewayUrls, lab.org, lab.key)
    await eventually(() => delivered().size >= 20, 'the receiver getting events', 60_000, 200)
    const cutAt = Date.now()
    lab.net.cut('w1')
    const bound = receiver.requests.filter((r) => r.at > cutAt - TIMEOUT_MS).length
    const before = receiver.requests.length
    t.diagnostic(`receiver cut off after ${flow.accepted.length} accepted and ${before} requests`)
    await sleepUntil(cutAt + OUTAGE_MS)
    lab.net.heal('w1')
    const healedAt = Date.now()
    await eventually(() => flow!.accepted.filter((o) => o.at > healedAt).length >= 20, 'sends after the heal', 60_000, 200)
    await flow.stop()

    const ids = flow.accepted.map((o) => o.id!)
    await eventually(() => ids.every((id) => lab.sink.messages.some((m) => m.messageId === flow!.messageId(id))) || undefined,
      () => `every accepted message at the sink; missing ${flow!.tally(lab.sink).missing.length}`, 120_000, 500)
    await eventually(() => { const got = messagesWithEvent(); return ids.every((id) => got.has(id)) || undefined },
      () => `a delivered event for every accepted message; missing ${ids.filter((id) => !messagesWithEvent().has(id)).length}`,
      240_000, 500)
    await nothingHappensFor(3000) // a repeated request in flight would arrive by now
    const events = delivered()
    let repeats = 0
    for (const n of events.values()) repeats += n - 1
    const tally = flow.tally(lab.sink)
    const late = receiver.requests.slice(before).filter((r) => r.at >= healedAt).length
    t.diagnostic(`accepted ${tally.accepted}, delivered ${tally.delivered}, lost ${tally.lost}, mail duplicates ${tally.duplicates}; ` +
      `delivered events ${events.size}, repeated ${repeats} (bound ${bound}); ${late} requests after the heal`)
    assert.equal(tally.lost, 0)
    assert.equal(tally.duplicates, 0, 'the fault is on the receiver only: no message is sent twice')
    assert.ok(repeats <= bound, `${repeats} events repeated; at most ${bound} were in flight at the cut`)
  } finally {
    await flow?.stop()
    await rx?.process.stop()
    await lab.dispose()
  }
})
