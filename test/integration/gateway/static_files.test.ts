import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import uWS from 'uWebSockets.js'
import { pino } from 'pino'
import { registerStaticFiles } from '../../../gateway/static_files.ts'

const sockets: uWS.us_listen_socket[] = []
const dirs: string[] = []
after(() => {
  for (const s of sockets) uWS.us_listen_socket_close(s)
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

async function serve (dir: string): Promise<string> {
  const app = uWS.App()
  registerStaticFiles(app, pino({ level: 'silent' }), dir)
  const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) => app.listen('127.0.0.1', 0, (s) => {
    if (s === false) reject(new Error('listen'))
    else resolve(s)
  }))
  sockets.push(socket)
  return `http://127.0.0.1:${uWS.us_socket_local_port(socket)}`
}

test('without a build, /dashboard answers 404 not_found saying how to build it', async () => {
  const base = await serve(join(tmpdir(), 'ob-no-such-dashboard'))
  for (const path of ['/dashboard', '/dashboard/', '/dashboard/assets/app.js']) {
    const res = await fetch(base + path)
    assert.equal(res.status, 404, path)
    const body = await res.json() as { error: { code: string, message: string, request_id: string } }
    assert.equal(body.error.code, 'not_found')
    assert.match(body.error.message, /npm run build:dashboard/)
    assert.equal(body.error.request_id, res.headers.get('x-request-id'))
  }
})

test('files are read once at start and served with type, cache and security headers', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ob-dash-'))
  dirs.push(dir)
  mkdirSync(join(dir, 'assets'))
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>')
  writeFileSync(join(dir, 'assets', 'app-abc.js'), 'console.log(1)')
  const base = await serve(dir)
  writeFileSync(join(dir, 'index.html'), 'changed on disk')
  for (const path of ['/dashboard', '/dashboard/']) {
    const res = await fetch(base + path)
    assert.equal(res.status, 200)
    assert.equal(await res.text(), '<!doctype html><title>x</title>', 'served from memory')
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8')
    assert.equal(res.headers.get('cache-control'), 'no-cache')
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'/)
  }
  const js = await fetch(base + '/dashboard/assets/app-abc.js')
  assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8')
  assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable')
  assert.equal((await fetch(base + '/dashboard/..%2F..%2Fpackage.json')).status, 404)
  assert.equal((await fetch(base + '/dashboard/%E0%A4%A')).status, 404)
})

test('the root sends a browser to the dashboard', async () => {
  const base = await serve(join(tmpdir(), 'ob-no-such-dashboard'))
  const res = await fetch(base + '/', { redirect: 'manual' })
  assert.equal(res.status, 302)
  assert.equal(res.headers.get('location'), '/dashboard/')
  assert.match(await res.text(), /dashboard/)
})
