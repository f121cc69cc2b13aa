import { readdirSync, readFileSync, statSync } from 'node:fs'
import { extname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import type uWS from 'uWebSockets.js'
import type { Logger } from 'pino'
import { ApiError, newId } from '../protocol/mod.ts'

/** Where `npm run build:dashboard` writes the dashboard (relative to this module, in src or in dist). */
export function defaultDashboardDir (): string {
  const here = fileURLToPath(new URL('.', import.meta.url))
  const fromDist = join(here, '..', '..', 'dashboard', 'dist')
  const fromSrc = join(here, '..', 'dashboard', 'dist')
  return existsDir(fromDist) ? fromDist : fromSrc
}

function existsDir (path: string): boolean {
  try { return statSync(path).isDirectory() } catch { return false }
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2'
}

/**
 * The dashboard talks only to this origin; no inline script, no third parties. Inline styles are allowed because
 * the sandboxed frames that show a message's or a template's HTML (srcdoc) inherit this policy, and e-mail HTML is
 * styled inline; the dashboard's own markup is built with textContent, so no one can inject a style into it.
 * Images from http(s) are allowed for the same frames: a message's remote images load once its reader asks for them,
 * which the frame's own, stricter policy decides (dashboard/src/views/message_content.ts); the dashboard shows none.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data: http: https:; " +
    "style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY'
}

interface StaticFile { body: Buffer, type: string, cache: string }

/** Reads every file under `dir` once. Hashed assets are immutable; index.html is revalidated each time. */
export function loadStaticFiles (dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>()
  if (!existsDir(dir)) return files
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, entry.name)
      if (entry.isDirectory()) { walk(full); continue }
      const rel = relative(dir, full).split(sep).join('/')
      files.set(rel, {
        body: readFileSync(full),
        type: TYPES[extname(entry.name).toLowerCase()] ?? 'application/octet-stream',
        cache: rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache'
      })
    }
  }
  walk(dir)
  return files
}

function reply (res: uWS.HttpResponse, status: string, headers: Record<string, string>, body: Buffer | string): void {
  res.cork(() => {
    res.writeStatus(status)
    for (const k in headers) res.writeHeader(k, headers[k]!)
    res.end(body)
  })
}

/**
 * Serves the built dashboard at /dashboard (index.html) and /dashboard/* (its assets) from memory, and sends `/` there.
 * Without a build, /dashboard answers 404 `not_found` saying how to build it.
 */
export function registerStaticFiles (app: uWS.TemplatedApp, log: Logger, dir = defaultDashboardDir()): { files: number } {
  const files = loadStaticFiles(dir)
  if (files.size === 0) log.warn({ dir }, 'dashboard not built; /dashboard answers 404 (run npm run build:dashboard)')
  const notFound = (res: uWS.HttpResponse, message: string): void => {
    const requestId = newId('req')
    const body = JSON.stringify(new ApiError('not_found', message).toJSON(requestId))
    reply(res, '404 Not Found', { 'Content-Type': 'application/json', 'X-Request-Id': requestId }, body)
  }
  const serve = (res: uWS.HttpResponse, req: uWS.HttpRequest): void => {
    const url = req.getUrl()
    if (files.size === 0) { notFound(res, 'The dashboard is not built on this server. Run `npm run build:dashboard` and restart.'); return }
    // Asset URLs in index.html are absolute (/dashboard/assets/…), so /dashboard and /dashboard/ both serve it.
    let path = url.slice('/dashboard/'.length)
    try { path = decodeURIComponent(path) } catch { /* keep it raw: it then matches no file */ }
    const file = files.get(path === '' ? 'index.html' : path)
    if (file === undefined) { notFound(res, `No dashboard file at ${url}.`); return }
    reply(res, '200 OK', { 'Content-Type': file.type, 'Cache-Control': file.cache, ...SECURITY_HEADERS }, file.body)
  }
  app.get('/dashboard', serve)
  app.get('/dashboard/*', serve)
  // the root has no API of its own: someone who opens the server's address in a browser wants the dashboard
  app.get('/', (res) => {
    reply(res, '302 Found', { Location: '/dashboard/', 'Content-Type': 'text/plain; charset=utf-8', 'X-Request-Id': newId('req') },
      'The dashboard is at /dashboard/; the API under /v1/.\n')
  })
  return { files: files.size }
}
