import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Value } from 'typebox/value'
import type { TSchema } from 'typebox'
import { ROUTES } from '../../../gateway/routes/mod.ts'
import { compileValidator, type Validator } from '../../../gateway/http/validate.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'

/**
 * Validation work grows linearly with the input, for every string a route's body or query schema holds. Each
 * string field gets adversarial values (runs of the characters its pattern accepts, then a character that makes
 * the match fail) of size n and 8n; the CPU time of the route's compiled validator (the one the gateway runs) may
 * grow by at most 20× (linear work gives about 8×, quadratic 64×). Ratios, never absolute times: the machine may
 * be busy. Then the costliest input goes through the running gateway at both sizes, with the same bound.
 */

const N = 2_000
const GROWTH = 8
const MAX_RATIO = 20

interface Slot {
  label: string
  pattern?: string
  /** The request body (or query) with `s` in this string field. */
  make: (s: string) => unknown
}

/** Every string a value of `schema` can hold, reached through objects, records (keys and values), arrays and unions. */
function stringSlots (schema: Record<string, any>, label: string, wrap: (v: unknown) => unknown, out: Slot[]): Slot[] {
  if (Array.isArray(schema.anyOf)) for (const [i, branch] of schema.anyOf.entries()) stringSlots(branch, `${label}|${i}`, wrap, out)
  if (schema.type === 'string' && schema.const === undefined && schema.enum === undefined) {
    out.push({ label, pattern: schema.pattern, make: wrap })
  }
  if (schema.type === 'array' && schema.items !== undefined) stringSlots(schema.items, `${label}[0]`, (v) => wrap([v]), out)
  if (schema.type === 'object') {
    for (const [name, sub] of Object.entries<Record<string, any>>(schema.properties ?? {})) {
      stringSlots(sub, `${label}.${name}`, (v) => wrap({ [name]: v }), out)
    }
    for (const [keyPattern, sub] of Object.entries<Record<string, any>>(schema.patternProperties ?? {})) {
      out.push({ label: `${label}{key}`, pattern: keyPattern, make: (s) => wrap({ [s]: 'v' }) })
      stringSlots(sub, `${label}{value}`, (v) => wrap({ X: v }), out)
    }
  }
  return out
}

const CANDIDATES = ['a', 'Z', '0', '.', '-', '+', '/', '=', '@', '_', ' ', '\t', '\r', '\n', '"', '<', '>', ',', ':', '\\', '*', 'é']

/** Characters each bracket class of the pattern accepts, so runs of them keep a backtracking matcher going. */
function classMembers (pattern: string | undefined): string[] {
  const found = new Set<string>()
  for (const [cls] of (pattern ?? '').matchAll(/\[(?:\\.|[^\]\\])*\]/g)) {
    let re: RegExp
    try { re = new RegExp(`^${cls}$`, 'u') } catch { continue }
    for (const c of CANDIDATES.filter((c) => re.test(c)).slice(0, 3)) found.add(c)
  }
  return [...found]
}

/** Adversarial values of about `n` characters for one field. */
function adversarial (slot: Slot, n: number): string[] {
  const members = classMembers(slot.pattern)
  const pumps = new Set(['a', '.', '\n', '\r\n', ' ', '=', 'a.', 'a-', 'a@', '"', ...members])
  for (const a of members) for (const b of members) if (a !== b) pumps.add(a + b)
  const out: string[] = []
  for (const prefix of ['', 'x@', 'a <']) {
    for (const pump of pumps) {
      const run = pump.repeat(Math.ceil(n / pump.length))
      for (const suffix of ['!', '\n', ' ', '\u0000', '@', '>']) out.push(prefix + run + suffix)
    }
  }
  return out
}

interface Target { route: string, schema: TSchema, validator: Validator, query: boolean }

function targets (): Target[] {
  const out: Target[] = []
  for (const def of ROUTES) {
    const name = `${def.method === 'del' ? 'DELETE' : def.method.toUpperCase()} ${def.path}`
    if (def.body !== undefined) out.push({ route: name, schema: def.body, validator: compileValidator(def.body), query: false })
    if (def.query !== undefined) {
      out.push({ route: `${name} ?query`, schema: def.query, validator: compileValidator(def.query), query: true })
    }
  }
  return out
}

/** CPU time (µs) of validating every value, as the gateway does (queries are converted first), `reps` times. */
function cpuOf (t: Target, values: unknown[], reps: number): number {
  const start = process.cpuUsage()
  for (let r = 0; r < reps; r++) {
    for (const v of values) t.validator.check(t.query ? Value.Convert(t.schema, v) : v)
  }
  const used = process.cpuUsage(start)
  return used.user + used.system
}

/** The smallest of three runs: other work on the machine only ever adds time. */
function minCpuOf (t: Target, values: unknown[], reps: number): number {
  return Math.min(cpuOf(t, values, reps), cpuOf(t, values, reps), cpuOf(t, values, reps))
}

interface Worst { route: string, slot: string, make: (n: number) => unknown, costPerChar: number }
let worst: Worst | undefined

test(`validation CPU grows less than ${MAX_RATIO}× when every string field of every route's schema grows ${GROWTH}×`, (t) => {
  const all = targets()
  assert.ok(all.length >= 20, 'every route with a body or query schema')
  const failures: string[] = []
  let highest = { ratio: 0, what: '' }
  let fields = 0
  for (const target of all) {
    for (const slot of stringSlots(target.schema as Record<string, any>, 'body', (v) => v, [])) {
      const small = adversarial(slot, N).map((s) => slot.make(s))
      const large = adversarial(slot, N * GROWTH).map((s) => slot.make(s))
      // enough repetitions for the small size to take a few milliseconds, well above the clock's grain
      let reps = 1
      while (cpuOf(target, small, reps) < 5_000 && reps < 4096) reps *= 2
      const smallUs = minCpuOf(target, small, reps)
      const largeUs = minCpuOf(target, large, reps)
      const ratio = largeUs / smallUs
      fields++
      if (ratio > highest.ratio) highest = { ratio, what: `${target.route} ${slot.label}` }
      if (ratio >= MAX_RATIO) {
        failures.push(`${target.route} ${slot.label}: ×${ratio.toFixed(1)} ` +
          `(${(smallUs / reps).toFixed(0)} µs → ${(largeUs / reps).toFixed(0)} µs)`)
      }
      const costPerChar = largeUs / reps / (N * GROWTH)
      if (worst === undefined || costPerChar > worst.costPerChar) {
        // the single value of the large set that costs most, rebuilt at any size for the gateway test
        let slowest = 0
        let slowestMs = -1
        for (let i = 0; i < large.length; i++) {
          const us = cpuOf(target, [large[i]], 1)
          if (us > slowestMs) { slowestMs = us; slowest = i }
        }
        worst = { route: target.route, slot: slot.label, make: (n) => slot.make(adversarial(slot, n)[slowest]!), costPerChar }
      }
    }
  }
  t.diagnostic(`${fields} string fields; highest growth ×${highest.ratio.toFixed(1)} (${highest.what}); ` +
    `costliest per character: ${worst?.route} ${worst?.slot}`)
  assert.deepEqual(failures, [], `validation work grows faster than linearly:\n${failures.join('\n')}`)
})

let ob: TestOutbox
let org: TestOrg
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org('enterprise')
})
after(async () => { await ob.close() })

/** CPU time (µs) of this process while the gateway (running in it) answers one request. */
async function requestCpu (method: string, path: string, body: unknown): Promise<{ us: number, status: number, code: string }> {
  const start = process.cpuUsage()
  const res = await ob.request(method, path, { key: org.adminKey, body })
  const used = process.cpuUsage(start)
  return { us: used.user + used.system, status: res.status, code: res.body?.error?.code }
}

test('the costliest inputs, sent to the running gateway at n and 8n characters, cost less than 20× more and are 400', async (t) => {
  const big = 20_000
  const cases: Array<{ what: string, method: string, path: string, make: (n: number) => unknown }> = [
    {
      what: 'attachment content: line breaks then a bad character',
      method: 'POST',
      path: '/v1/messages/send',
      make: (n) => ({
        from: `me@${org.domain}`, to: 'you@example.com', subject: 's', text: 't',
        attachments: [{ filename: 'a.txt', content: '\r\n'.repeat(n / 2) + '!' }]
      })
    },
    {
      what: 'suppression email: dotted labels then a space',
      method: 'POST',
      path: '/v1/suppressions',
      make: (n) => ({ email: 'x@' + 'a.'.repeat(n / 2) + ' ' })
    }
  ]
  if (worst !== undefined && !worst.route.endsWith('?query') && worst.route.startsWith('POST ') && !worst.route.includes(':')) {
    const [method, path] = worst.route.split(' ') as [string, string]
    cases.push({ what: `the sweep's costliest: ${worst.route} ${worst.slot}`, method, path, make: worst.make })
  }
  for (const c of cases) {
    const threeRuns = async (n: number): Promise<Array<{ us: number, status: number, code: string }>> => {
      const runs = []
      for (let i = 0; i < 3; i++) runs.push(await requestCpu(c.method, c.path, c.make(n)))
      return runs
    }
    await threeRuns(big) // warm-up
    // the smallest of three runs at each size: other work on the machine only ever adds time
    const small = Math.min(...(await threeRuns(big)).map((r) => r.us))
    const runs = await threeRuns(big * GROWTH)
    const large = Math.min(...runs.map((r) => r.us))
    assert.equal(runs[0]!.status, 400, c.what)
    assert.equal(runs[0]!.code, 'validation_error', c.what)
    t.diagnostic(`${c.what}: ${small} µs → ${large} µs (×${(large / small).toFixed(1)})`)
    assert.ok(large / small < MAX_RATIO, `${c.what}: ×${(large / small).toFixed(1)} (${small} µs → ${large} µs)`)
  }
})
