import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { MxLookupError, MxResolver } from '../../../engine/actor/mx.ts'
import { classifyError } from '../../../engine/actor/classify.ts'
import { DnsServer } from '../../helpers/dns_server.ts'

// How MX hosts resolve for each kind of source (docs/delivery.md#routing-and-connections), against a real DNS server.
let dns: DnsServer

before(async () => {
  dns = await DnsServer.start({
    MX: {
      'v4only.example': [{ exchange: 'mx.v4only.example', priority: 10 }],
      'v6only.example': [{ exchange: 'mx.v6only.example', priority: 10 }],
      'dual.example': [{ exchange: 'mx.dual.example', priority: 10 }],
      // the preferred host is IPv4 only, the backup IPv6 only: each family has its own list
      'mixed.example': [{ exchange: 'a.mixed.example', priority: 10 }, { exchange: 'aaaa.mixed.example', priority: 20 }],
      'private6.example': [{ exchange: 'mx.private6.example', priority: 10 }]
    },
    A: {
      'mx.v4only.example': ['203.0.113.25'], 'mx.dual.example': ['198.51.100.25'], 'a.mixed.example': ['198.51.100.26'],
      'implicit4.example': ['198.51.100.27']
    },
    AAAA: {
      'mx.v6only.example': ['2606:4700::25'], 'mx.dual.example': ['2606:4700::26'], 'aaaa.mixed.example': ['2606:4700::27'],
      'implicit6.example': ['2606:4700::28'], 'mx.private6.example': ['fd00::25']
    }
  })
})
after(async () => await dns.close())

// documentation addresses are non-public: the check is lifted here except where a test is about it
const resolver = (): MxResolver => new MxResolver([dns.address], true)

async function lookupError (p: Promise<unknown>): Promise<MxLookupError> {
  const err = await p.then(() => undefined, (e: unknown) => e)
  assert.ok(err instanceof MxLookupError, `expected an MxLookupError, got ${String(err)}`)
  return err
}

test('the host\'s own address: A first, AAAA for a host without A', async () => {
  const mx = resolver()
  assert.deepEqual(await mx.route('dual.example'), [{ host: 'mx.dual.example', ip: '198.51.100.25', family: 4 }])
  assert.deepEqual(await mx.route('v6only.example'), [{ host: 'mx.v6only.example', ip: '2606:4700::25', family: 6 }])
  assert.deepEqual(await mx.route('mixed.example'), [
    { host: 'a.mixed.example', ip: '198.51.100.26', family: 4 }, { host: 'aaaa.mixed.example', ip: '2606:4700::27', family: 6 }
  ])
  assert.deepEqual(await mx.route('implicit6.example'), [{ host: 'implicit6.example', ip: '2606:4700::28', family: 6 }], 'implicit MX too')
})

test('an IPv6 source gets AAAA records only, an IPv4 source A records only', async () => {
  const mx = resolver()
  assert.deepEqual(await mx.route('dual.example', 6), [{ host: 'mx.dual.example', ip: '2606:4700::26', family: 6 }])
  assert.deepEqual(await mx.route('dual.example', 4), [{ host: 'mx.dual.example', ip: '198.51.100.25', family: 4 }])
  assert.deepEqual(await mx.route('mixed.example', 6), [{ host: 'aaaa.mixed.example', ip: '2606:4700::27', family: 6 }])
  assert.deepEqual(await mx.route('mixed.example', 4), [{ host: 'a.mixed.example', ip: '198.51.100.26', family: 4 }])
})

test('a source whose family no mail host has gets ENOHOSTFORFAMILY, deferred, not a bounce', async () => {
  const mx = resolver()
  for (const [domain, family] of [['v4only.example', 6], ['v6only.example', 4], ['implicit4.example', 6]] as const) {
    const err = await lookupError(mx.route(domain, family))
    assert.equal(err.code, 'ENOHOSTFORFAMILY', `${domain} over IPv${family}`)
    assert.equal(classifyError(err).kind, 'deferred')
  }
  // a domain with no mail host at all is still a bounce whatever the family
  for (const family of [4, 6, undefined] as const) {
    assert.equal((await lookupError(mx.route('nowhere.example', family))).code, 'ENOMAILHOST', `family ${String(family)}`)
  }
})

test('IPv6 mail hosts on non-public addresses are refused like IPv4 ones', async () => {
  const mx = new MxResolver([dns.address], false)
  for (const family of [6, undefined] as const) {
    const err = await lookupError(mx.route('private6.example', family))
    assert.equal(err.code, 'ENONPUBLICMAILHOST')
    assert.match(err.message, /fd00::25/)
  }
})
