import assert from 'node:assert/strict'
import { connect } from 'node:net'
import fc from 'fast-check'
import { ERRORS } from '../../../protocol/mod.ts'
import type { RouteDef } from '../../../gateway/http/route.ts'
import type { TestOutbox } from '../../helpers/outbox.ts'

export interface RawResponse { status: number, head: string, body: string }

/**
 * One request written byte for byte over a socket (methods, header bytes and paths no HTTP client sends).
 * Resolves with the parsed response, or `null` when the server closed the connection without one. With
 * `heldIsRefusal`, a connection the server holds open without answering until `timeoutMs` also counts as
 * `null` (uWS holds a request its parser refuses until its idle timeout closes it).
 */
export async function rawHttp (
  port: number, request: Buffer | string, timeoutMs = 10_000, heldIsRefusal = false
): Promise<RawResponse | null> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let buf = Buffer.alloc(0)
    const timer = setTimeout(() => {
      socket.destroy()
      heldIsRefusal ? resolve(null) : reject(new Error('no response and no close'))
    }, timeoutMs)
    const done = (r: RawResponse | null): void => { clearTimeout(timer); socket.destroy(); resolve(r) }
    const tryParse = (): void => {
      const end = buf.indexOf('\r\n\r\n')
      if (end === -1) return
      const head = buf.subarray(0, end).toString('latin1')
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(head)
      if (m === null) return done({ status: 0, head, body: '' })
      if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
        const body = dechunk(buf.subarray(end + 4))
        if (body !== null) done({ status: Number(m[1]), head, body: body.toString('utf8') })
        return
      }
      const len = /\r\ncontent-length: *(\d+)/i.exec(head)
      const bodyLen = len === null ? 0 : Number(len[1])
      if (buf.length - end - 4 < bodyLen) return
      done({ status: Number(m[1]), head, body: buf.subarray(end + 4, end + 4 + bodyLen).toString('utf8') })
    }
    socket.on('data', (d) => { buf = Buffer.concat([buf, d]); tryParse() })
    socket.on('error', () => done(null))
    socket.on('close', () => done(null))
    socket.write(request)
  })
}

/**
 * A chunked body once its last chunk has arrived, else null. The gateway answers a request early (a 413 while the
 * client is still uploading) as a chunked response, ended once the rest of the upload has been read.
 */
function dechunk (raw: Buffer): Buffer | null {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const eol = raw.indexOf('\r\n', at)
    if (eol === -1) return null
    const size = parseInt(raw.subarray(at, eol).toString('latin1'), 16)
    if (Number.isNaN(size)) return null
    if (size === 0) return Buffer.concat(parts)
    if (raw.length < eol + 2 + size + 2) return null
    parts.push(raw.subarray(eol + 2, eol + 2 + size))
    at = eol + 2 + size + 2
  }
}

const DOCUMENTED_4XX = new Set<number>(Object.values(ERRORS).map((e) => e.status).filter((s) => s >= 400 && s < 500))

/** A documented 4xx in the JSON error format whose code maps to that status, or any 2xx/3xx. Never a 5xx. */
export function assertDocumented (status: number, text: string, what: string): void {
  assert.ok(status < 500, `${what} → ${status} ${text.slice(0, 300)}`)
  if (status < 400) return
  assert.ok(DOCUMENTED_4XX.has(status), `${what} → undocumented ${status}`)
  let body: any
  try { body = JSON.parse(text) } catch { assert.fail(`${what} → ${status} without a JSON body: ${text.slice(0, 200)}`) }
  const code = body?.error?.code as keyof typeof ERRORS
  assert.ok(code in ERRORS, `${what} → unknown error code ${String(code)}`)
  assert.equal(ERRORS[code].status, status, `${what} → ${String(code)} with status ${status}`)
  assert.equal(typeof body.error.message, 'string', what)
}

export async function assertHealthy (ob: TestOutbox): Promise<void> {
  const res = await ob.request('GET', '/healthz')
  assert.equal(res.status, 200, 'healthz after the property')
}

export function httpMethod (r: RouteDef): string {
  return r.method === 'del' ? 'DELETE' : r.method.toUpperCase()
}

export function concretePath (r: RouteDef): string {
  return r.path.replace(/:([A-Za-z_]+)/g, (_m, name: string) => /email|address/i.test(name) ? 'nobody%40example.com' : 'zz_00000000000000000000000000')
}

/** A value of a JSON type other than the one the schema asks for. */
function wrongTypeFor (schema: any): fc.Arbitrary<unknown> {
  const type = schema?.type
  const all: Array<[string, fc.Arbitrary<unknown>]> = [
    ['string', fc.string({ maxLength: 20 })],
    ['number', fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))],
    ['boolean', fc.boolean()],
    ['null', fc.constant(null)],
    ['array', fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 })],
    ['object', fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 })]
  ]
  const others = all.filter(([t]) => t !== type && !(type === 'integer' && t === 'number')).map(([, a]) => a)
  return fc.oneof(...others)
}

/**
 * Bodies derived from the route's `body` schema: every declared field present with a random value, one or
 * more fields of the wrong type, or fields swapped for hostile strings.
 */
export function schemaBodies (schema: any): fc.Arbitrary<unknown> {
  const props: Record<string, any> = schema?.properties ?? {}
  const names = Object.keys(props)
  if (names.length === 0) return fc.jsonValue({ maxDepth: 2 })
  const hostile = fc.constantFrom('\r\nBcc: x@evil.test', '\u0000', '../../etc/passwd', 'a'.repeat(5000), '\ud800', '%00', '{{x}}', '<script>', 'http://127.0.0.1/')
  const field = (n: string): fc.Arbitrary<unknown> => fc.oneof(wrongTypeFor(props[n]), hostile, fc.jsonValue({ maxDepth: 2 }))
  return fc.record(Object.fromEntries(names.map((n) => [n, field(n)])), { requiredKeys: [] })
}

/** A large value built inside the property, so that a failure report prints its label and not the value. */
export class Big {
  constructor (readonly label: string, private readonly make: () => unknown) {}
  get value (): unknown { return this.make() }
  [fc.toStringMethod] (): string { return `Big(${this.label})` }
}

/** JSON text sent as it is. */
export class RawJson {
  constructor (readonly text: string) {}
}

/** Request options carrying a generated body: objects are serialised by the client, RawJson is sent as text. */
export function bodyOpts (v: unknown): { body?: unknown, rawBody?: string, headers?: Record<string, string> } {
  const value = v instanceof Big ? v.value : v
  if (value instanceof RawJson) return { rawBody: value.text, headers: { 'content-type': 'application/json' } }
  return { body: value }
}

/** Any JSON value, deeply nested values, huge arrays. */
export const randomJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  // Deep nesting is sent as text: JSON.stringify on the client side would overflow first.
  fc.integer({ min: 50, max: 20_000 }).map((d) => new Big(`[ nested ${d} deep`, () => new RawJson('['.repeat(d) + ']'.repeat(d)))),
  fc.integer({ min: 50, max: 20_000 })
    .map((d) => new Big(`{a:} nested ${d} deep`, () => new RawJson('{"a":'.repeat(d) + '1' + '}'.repeat(d)))),
  fc.integer({ min: 10_000, max: 100_000 }).map((n) => new Big(`array of ${n}`, () => new Array(n).fill(0))),
  fc.integer({ min: 1000, max: 20_000 }).map((n) => new Big(`${n} recipients`, () => ({
    to: new Array(n).fill('a@b.test'), messages: new Array(Math.min(n, 500)).fill({})
  })))
)

/** Bytes that are not a JSON document: invalid UTF-8, truncated JSON, binary, empty. */
export const nonJsonBytes: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
  fc.constant(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d])), // {"a":"<invalid utf-8>"}
  fc.constant(Buffer.from([0xed, 0xa0, 0x80])), // a UTF-8 encoded lone surrogate
  fc.constant(Buffer.alloc(0)),
  fc.string({ maxLength: 50 }).map((s) => Buffer.from('{' + s)),
  fc.constant(Buffer.from('\uFEFF{}'))
)
