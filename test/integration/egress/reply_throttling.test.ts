import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { queuedMessage } from '../../helpers/engine_env.ts'
import { eventually } from '../../helpers/waiting.ts'
import { EgressState } from '../../../stores/egress/mod.ts'
import { suppressionKey } from '../../../stores/control_plane/mod.ts'
import type { QueuedMessage } from '../../../protocol/mod.ts'
import { startEgressCluster, type EgressCluster } from './egress_cluster.ts'

// Replies that speak of the sending address act on its lane, not on the recipient: Gmail's 421 4.7.28 ("unusual
// rate of unsolicited mail originating from your IP address") slows mta2|google, which recovers by itself; Outlook's
// 550 5.7.1 (S3150) block list takes mta2|microsoft out. In both cases the recipient is deferred (never bounced or
// suppressed) and delivered, and mail from the same address to other providers keeps going.
const MTA2 = '127.0.0.2'
const MTA3 = '127.0.0.3'
const RATE_LIMITED = 2 // Google recipients answered 421 from MTA2
const RECOVER_EVERY_MS = 15_000 // OB_EGRESS_RECOVER_EVERY_MS of the engine: a halved lane is whole again after this

const GMAIL_421 = '4.7.28 [127.0.0.2] Our system has detected an unusual rate of unsolicited mail originating from your IP ' +
  'address. To protect our users from spam, mail sent from your IP address has been temporarily rate limited.'
const OUTLOOK_550 = '5.7.1 Unfortunately, messages from [127.0.0.2] weren\'t sent. Please contact your Internet service ' +
  'provider since part of their network is on our block list (S3150).'

/** RCPT replies the sink gave from its own rule: recipient → the client addresses it refused. */
const refused = new Map<string, string[]>()
let googleRefusals = 0
let c: EgressCluster
let state: EgressState

before(async () => {
  c = await startEgressCluster({
    engines: 1,
    env: { OB_EGRESS_RECOVER_EVERY_MS: String(RECOVER_EVERY_MS) },
    sink: {
      rcptReply: (rcpt, from) => {
        if (from !== MTA2) return undefined
        const note = (): void => { refused.set(rcpt, [...refused.get(rcpt) ?? [], from]) }
        if (rcpt.endsWith('@workspace.test') && googleRefusals < RATE_LIMITED) {
          googleRefusals++
          note()
          return { code: 421, message: GMAIL_421 }
        }
        if (rcpt.endsWith('@hosted365.test')) {
          note()
          return { code: 550, message: OUTLOOK_550 }
        }
        return undefined
      }
    },
    configure: async (ob, org) => {
      const egress = ob.proc.cp.egress
      await egress.addSource({ name: 'mta2', address: MTA2, ehlo: 'mta2.outbox.test' })
      await egress.addSource({ name: 'mta3', address: MTA3, ehlo: 'mta3.outbox.test' })
      // mta2 first nearly always, so that it is the one that hears the replies
      await egress.putPool('pair', [{ source: 'mta2', weight: 95 }, { source: 'mta3', weight: 5 }])
      await egress.assignOrg(org.orgId, 'pair')
    }
  })
  // recovery is computed when read, with the reader's period: the engine's
  state = new EgressState(c.redis, Date.now, { recoverEveryMs: RECOVER_EVERY_MS })
})
after(async () => { await c?.close() })

function send (to: string[]): QueuedMessage[] {
  const msgs = to.map((rcpt) => queuedMessage(c.org, { to: [rcpt], track_opens: false, track_clicks: false }))
  void Promise.all(msgs.map(async (m) => { await c.publish(m) }))
  return msgs
}

async function allDelivered (msgs: QueuedMessage[], timeoutMs = 30_000): Promise<void> {
  await c.events.until(() => msgs.every((m) => c.events.of(m.id, 'delivered').length === 1), timeoutMs)
}

function notBouncedNorSuppressed (m: QueuedMessage): void {
  const rcpt = m.to[0]!
  assert.deepEqual(c.events.of(m.id).filter((e) => e.type === 'bounced' || e.type === 'failed'), [], `${rcpt} not bounced`)
  assert.equal(c.ob.proc.cp.suppressions.get(suppressionKey(c.org.orgId, rcpt)), undefined, `${rcpt} not suppressed`)
}

test('Gmail\'s 421 4.7.28 slows mta2|google; its recipients are deferred, then delivered; mta2 keeps sending elsewhere', async (t) => {
  const google = send(Array.from({ length: 8 }, (_v, i) => `g${i}@workspace.test`))
  const slowed = await eventually(async () => {
    const th = await state.throttle('mta2|google')
    return th.factor < 1 ? th : undefined
  }, 'mta2|google slowed', 30_000)
  t.diagnostic(`mta2|google factor ${slowed.factor} (${slowed.reason}) after ${googleRefusals} refusals`)
  assert.equal(slowed.reason, 'google-ip-rate-limited')
  assert.equal((await state.throttle('mta3|google')).factor, 1, 'the other source\'s lane is untouched')

  // mail from mta2 to a provider that said nothing goes on at once
  const site = send(Array.from({ length: 5 }, (_v, i) => `s${i}@small.test`))
  await allDelivered([...google, ...site])
  assert.ok(site.some((m) => c.sink.to(m.to[0]!)[0]?.remoteAddress === MTA2), 'mta2 still sends to other providers')

  const hit = google.filter((m) => refused.has(m.to[0]!))
  assert.equal(hit.length, RATE_LIMITED, 'the sink refused as many Google recipients as it was told to')
  for (const m of hit) {
    const types = c.events.of(m.id).map((e) => e.type)
    assert.deepEqual(types, ['deferred', 'delivered'], `${m.to[0]!}: deferred once, then delivered`)
    assert.equal(c.sink.to(m.to[0]!).length, 1)
    notBouncedNorSuppressed(m)
  }

  // the lane climbs back by itself, and mta2 sends to Google again
  await eventually(async () => (await state.throttle('mta2|google')).factor === 1, 'mta2|google back to its full rate',
    RECOVER_EVERY_MS * 3)
  const later = send(Array.from({ length: 6 }, (_v, i) => `later${i}@workspace.test`))
  await allDelivered(later)
  assert.ok(later.some((m) => c.sink.to(m.to[0]!)[0]?.remoteAddress === MTA2), 'mta2 sends to Google again')
})

test('Outlook\'s 550 5.7.1 (S3150) takes mta2|microsoft out: the recipient is not bounced, and goes from mta3', async () => {
  const [m] = send(['person@hosted365.test'])
  await allDelivered([m!])
  assert.deepEqual(refused.get('person@hosted365.test'), [MTA2], 'refused once, from mta2')
  assert.equal(c.sink.to('person@hosted365.test')[0]?.remoteAddress, MTA3, 'delivered from the other source')
  assert.deepEqual(c.events.of(m!.id).map((e) => e.type), ['deferred', 'delivered'])
  notBouncedNorSuppressed(m!)
  const th = await state.throttle('mta2|microsoft')
  assert.ok(th.outUntil > Date.now() + 3_600_000, 'mta2 is out for Microsoft for hours')
  assert.equal(th.reason, 'microsoft-block-list')

  // while it is out, no Microsoft mail tries mta2
  const more = send(Array.from({ length: 4 }, (_v, i) => `p${i}@hosted365.test`))
  await allDelivered(more)
  for (const x of more) {
    assert.equal(refused.has(x.to[0]!), false, `${x.to[0]!} was not tried from mta2`)
    assert.deepEqual(c.events.of(x.id).map((e) => e.type), ['delivered'])
  }
})
