import { test, before, after } from 'node:test'
import v8 from 'node:v8'
import vm from 'node:vm'
import fc from 'fast-check'
import { ROUTES } from '../../../gateway/routes/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import {
  assertDocumented, bodyOpts, assertHealthy, concretePath, httpMethod, nonJsonBytes, randomJson, schemaBodies
} from './fuzz_helpers.ts'

/**
 * Every route of the table, fed random JSON values, schema-shaped bodies with wrong types and hostile strings,
 * and bytes that are not JSON: each answer is a documented 4xx in the error format (or a 2xx for a body that
 * happens to be valid), never a 5xx, and the server is healthy after each route.
 */
let ob: TestOutbox
let org: TestOrg
let rss0 = 0
let heap0 = 0
// A GC to measure against, with or without --expose-gc on the command line.
v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org('enterprise') // the default enterprise limit of 5000 a minute: fuzzing never meets it
  gc()
  rss0 = process.memoryUsage().rss
  heap0 = process.memoryUsage().heapUsed
})
after(async () => { await ob.close() })

const RUNS = 20

for (const r of ROUTES) {
  const method = httpMethod(r)
  const path = concretePath(r)
  const hasBody = method === 'POST' || method === 'PATCH' || method === 'PUT'
  test(`${method} ${r.path}: random bodies and bytes get a documented answer`, async () => {
    // an operator key of its own per operator route: 40 requests each stay far below its 600 a minute
    const key = r.permission === null
      ? undefined
      : r.permission === 'operator' ? (await ob.proc.cp.operatorKeys.create('fuzz')).value : org.adminKey
    const json = r.body !== undefined ? fc.oneof(schemaBodies(r.body), randomJson) : randomJson
    await fc.assert(fc.asyncProperty(json, async (body) => {
      const res = await ob.request(method, path, { ...(key !== undefined ? { key } : {}), ...(hasBody ? bodyOpts(body) : {}) })
      assertDocumented(res.status, res.text, `${method} ${path}`)
    }), { numRuns: RUNS })
    if (hasBody) {
      const contentTypes = fc.constantFrom('application/json', 'application/json; charset=latin1', 'text/plain', '',
        'application/x-www-form-urlencoded', 'application/vnd.api+json', 'multipart/form-data; boundary=x')
      await fc.assert(fc.asyncProperty(nonJsonBytes, contentTypes, async (raw, contentType) => {
        const headers: Record<string, string> = contentType === '' ? {} : { 'content-type': contentType }
        const res = await ob.request(method, path, { ...(key !== undefined ? { key } : {}), rawBody: raw, headers })
        assertDocumented(res.status, res.text, `${method} ${path} raw ${contentType}`)
      }), { numRuns: RUNS })
    }
    await assertHealthy(ob)
  })
}

test('memory stays flat across the run', async () => {
  await new Promise((resolve) => setTimeout(resolve, 100))
  gc()
  const mb = (n: number): number => Math.round(n / 1048576)
  const heapGrown = process.memoryUsage().heapUsed - heap0
  const rssGrown = process.memoryUsage().rss - rss0
  // Live JS objects after a GC: request state kept per request (thousands of them, some of MBs) would show here.
  if (heapGrown > 64 * 1048576) throw new Error(`heap grew by ${mb(heapGrown)} MB`)
  // RSS is generous: freed pages of a few hundred MB of transient bodies are not all handed back to the OS.
  if (rssGrown > 400 * 1048576) throw new Error(`RSS grew by ${mb(rssGrown)} MB`)
})
