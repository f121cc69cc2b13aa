// test-group: multi-host — a gateway's link drops 30 % of its packets and its clients' traffic is delayed for 40 s
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { netnsUnavailable, nftUnavailable } from '../../helpers/netns/net.ts'
import { runFlowFault } from '../../helpers/netns/flow_fault.ts'
import { DelayProxy } from '../../helpers/netns/delay_proxy.ts'
import { GATEWAY_PORT } from '../../helpers/netns/lab.ts'

const DELAY_MS = 100
let proxy: DelayProxy | undefined
let dropped = 0

/**
 * Gateway g1's host drops 30 % of the packets it receives (an nft `numgen random` rule: requests from clients,
 * replies from NATS and Redis alike) for 40 s, and its clients reach it through a proxy that adds 100 ms each way.
 * Sends through it are slow, some time out at the client; none that was answered 202 is lost, and the engines,
 * which the fault does not touch, send nothing twice (bound 0).
 */
test('a gateway link at 30 % packet loss with added delay: every 202 is delivered once', {
  skip: netnsUnavailable() ?? nftUnavailable()
}, async (t) => {
  try {
    await runFlowFault(t, {
      what: 'g1 at 30 % loss, clients 100 ms away',
      outageMs: 40_000,
      gatewayUrls: (lab) => {
        // the proxy is made here, once the gateway hosts exist; every send to g1 goes through it from the start
        return [proxy!.url, lab.gatewayUrls[1]!]
      },
      take: (lab) => { lab.net.loss('g1', 30) },
      giveBack: (lab) => {
        dropped = lab.net.droppedPackets('g1')
        lab.net.loss('g1', 0)
      },
      bound: () => 0,
      after: async (_lab, t) => {
        t.diagnostic(`the rule dropped ${dropped} packets on their way into g1`)
        assert.ok(dropped > 0, 'packets were dropped')
      },
      lab: {
        onReady: async (lab) => {
          proxy = await DelayProxy.start(lab.net.rootAddress, { host: lab.net.host('g1').address, port: GATEWAY_PORT }, DELAY_MS)
        }
      }
    })
  } finally {
    await proxy?.close()
  }
})
