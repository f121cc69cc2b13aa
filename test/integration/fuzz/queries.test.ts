import { test, before, after } from 'node:test'
import fc from 'fast-check'
import { ROUTES } from '../../../gateway/routes/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { assertDocumented, assertHealthy, concretePath, httpMethod } from './fuzz_helpers.ts'

/**
 * Query strings and path parameters: for every GET route, random values for the parameters its `query` schema
 * declares (plus unknown and repeated ones), and random ids and tracking tokens in every `:param`. The answer is
 * a 2xx or a documented 4xx, never a 5xx.
 */
let ob: TestOutbox
let org: TestOrg
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org('enterprise')
})
after(async () => { await ob.close() })

const hostileValue = fc.oneof(
  fc.constantFrom('', '-1', '0', '1', '100', '101', '1e309', 'NaN', 'Infinity', '0x10', '99999999999999999999', '1.5', 'true', 'null', '[]',
    '{}', '2026-01-01T00:00:00Z', '2026-13-45T99:99:99Z', 'not-a-date', '%00', '%ff', '%', '%E2%82', 'msg_00000000000000000000000000',
    'delivered', 'a'.repeat(5000)),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.integer().map(String)
)

function queryNames (r: (typeof ROUTES)[number]): string[] {
  const props = (r.query as any)?.properties ?? {}
  return [...Object.keys(props), 'limit', 'cursor', 'from', 'to', 'type', 'status', 'unknown_param']
}

test('random query strings on every GET route', async () => {
  const gets = ROUTES.filter((r) => r.method === 'get' && r.path !== '/v1/events/stream')
  await fc.assert(fc.asyncProperty(
    fc.constantFrom(...gets)
      .chain((r) => fc.tuple(fc.constant(r), fc.array(fc.tuple(fc.constantFrom(...queryNames(r)), hostileValue), { maxLength: 5 }))),
    async ([r, pairs]) => {
      const qs = pairs.map(([k, v]) => `${k}=${v}`).join('&')
      const path = `${concretePath(r)}?${qs}`
      const res = await ob.request('GET', path, r.permission === null ? {} : { key: org.adminKey })
      assertDocumented(res.status, res.text, `GET ${path.slice(0, 200)}`)
    }), { numRuns: 250 })
  await assertHealthy(ob)
})

test('random ids and tokens in every path parameter', async () => {
  const withParams = ROUTES.filter((r) => r.path.includes('/:'))
  const param = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9_.~-]{1,300}$/),
    fc.string({ maxLength: 60 }).map(encodeURIComponent),
    fc.constantFrom('msg_' + '0'.repeat(26), 'key_' + 'z'.repeat(26), '..', '%2e%2e', '%2F', '%00', 'a%40b', '%40', 'x@y.z',
      'eyJhbGciOiJub25lIn0.e30.', 'AAAA.BBBB')
  )
  await fc.assert(fc.asyncProperty(fc.constantFrom(...withParams), param, async (r, value) => {
    const method = httpMethod(r)
    const path = r.path.replace(/:([A-Za-z_]+)/g, value)
    const hasBody = method === 'POST' || method === 'PATCH'
    const res = await ob.request(method, path, {
      ...(r.permission === null ? {} : { key: org.adminKey }), ...(hasBody ? { body: {} } : {})
    })
    assertDocumented(res.status, res.text, `${method} ${path.slice(0, 200)}`)
  }), { numRuns: 250 })
  await assertHealthy(ob)
})
