import {
  ApiError, STREAM_ID_MESSAGE, SUPPRESSION_REASONS, TRANSACTIONAL_STREAM, isBroadcast, isStreamId, notOrgStreamMessage
} from '../../protocol/mod.ts'
import { entryKey, type ControlPlane, type SuppressionListReason } from '../../stores/control_plane/mod.ts'
import { parseJson } from '../http/body.ts'
import { expiryOf, isEmail, normalizeEmail } from './suppressions.ts'

/** Addresses one import takes at most; more is 413 `payload_too_large` before any is written. */
export const IMPORT_MAX_ADDRESSES = 100_000
/**
 * The import's request body limit (the other routes keep MAX_BODY_BYTES, 10 MB): 100,000 JSON items with a
 * reason and an expiry take about 9 MB, and the longest addresses (254 characters) up to 29 MB.
 */
export const IMPORT_MAX_BODY_BYTES = 32 * 1024 * 1024 // 32 MB, documented
/** Refused lines the report lists at most (`refused_count` counts them all). */
export const IMPORT_REFUSED_LISTED = 1_000
/** A CSV line longer than this is refused unread (an address is at most 254 characters). */
const MAX_LINE_CHARS = 1_024
/** Lines checked between two turns of the event loop, so sends go on while a large import is checked. */
const CHECK_SLICE = 5_000
/** Entries rebuilt between two turns of the event loop (about a millisecond's work). */
const DECODE_SLICE = 2_000

/** One address of the input as given: `line` is the CSV line (header = 1) or the position in `addresses` (from 1). */
export interface ImportLine {
  line: number
  email: unknown
  reason?: unknown
  expires_at?: unknown
  stream?: unknown
  problem?: string
}
export interface RefusedLine { line: number, email: string, reason: string }
/** `stream`: the broadcast stream the entry applies to alone; absent: every stream. */
export interface ImportEntry { email: string, reason: SuppressionListReason, expiresAt?: string, stream?: string }
/** Whether the importing organisation has the message stream (`transactional` always). */
export type StreamExists = (id: string) => boolean

/**
 * What an import did, in one object: the response body, and what a record of the import keeps (the counts by
 * reason say what was added, never the addresses).
 */
export interface ImportSummary {
  imported: number
  already_suppressed: number
  refused_count: number
  refused: RefusedLine[]
  /** Addresses added, by reason. */
  imported_by_reason: Record<SuppressionListReason, number>
}

const COLUMNS = ['email', 'reason', 'expires_at', 'stream'] as const
/** Columns of the export that an import reads past, so that an export imports back as it is. */
const IGNORED_CSV_COLUMNS = ['created_at', 'message_id']

function tooMany (): ApiError {
  return new ApiError('payload_too_large', `An import takes at most ${IMPORT_MAX_ADDRESSES} addresses; split the list.`)
}

/** The fields of one CSV line (RFC 4180 quoting within the line), or undefined when its quotes do not close. */
function csvFields (line: string): string[] | undefined {
  if (!line.includes('"')) return line.split(',')
  const out: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (quoted) {
      if (c !== '"') field += c
      else if (line[i + 1] === '"') { field += '"'; i++ } else quoted = false
    } else if (c === '"') quoted = true
    else if (c === ',') { out.push(field); field = '' } else field += c
  }
  if (quoted) return undefined
  out.push(field)
  return out
}

/** The lines of a CSV body whose header names `email` and optionally `reason`, `expires_at` and `stream`, in any order. */
export function csvLines (text: string): ImportLine[] {
  const rows = text.split('\n')
  const header = csvFields((rows[0] ?? '').replace(/^\uFEFF/, '').replace(/\r$/, '').slice(0, MAX_LINE_CHARS))
  const names = (header ?? []).map((h) => h.trim().toLowerCase())
  const unknown = names.filter((n) => !(COLUMNS as readonly string[]).includes(n) && !IGNORED_CSV_COLUMNS.includes(n))
  if (!names.includes('email') || unknown.length > 0 || new Set(names).size !== names.length) {
    throw ApiError.validation([{
      field: 'header',
      message: 'must be the first line, naming email and optionally reason, expires_at, stream (created_at, message_id: read past)'
    }])
  }
  const at = {
    email: names.indexOf('email'),
    reason: names.indexOf('reason'),
    expires_at: names.indexOf('expires_at'),
    stream: names.indexOf('stream')
  }
  const out: ImportLine[] = []
  for (let i = 1; i < rows.length; i++) {
    const row = rows[i]!.endsWith('\r') ? rows[i]!.slice(0, -1) : rows[i]!
    if (row.trim() === '') continue
    if (out.length === IMPORT_MAX_ADDRESSES) throw tooMany()
    if (row.length > MAX_LINE_CHARS) {
      out.push({ line: i + 1, email: row.slice(0, 254), problem: `line longer than ${MAX_LINE_CHARS} characters` })
      continue
    }
    const f = csvFields(row)
    if (f === undefined || f.length !== names.length) {
      const problem = `must have ${names.length} fields, quoted where needed`
      out.push({ line: i + 1, email: (f?.[at.email] ?? row).slice(0, 254), problem })
      continue
    }
    const l: ImportLine = { line: i + 1, email: f[at.email]! }
    if (at.reason >= 0 && f[at.reason]!.trim() !== '') l.reason = f[at.reason]!.trim()
    if (at.expires_at >= 0 && f[at.expires_at]!.trim() !== '') l.expires_at = f[at.expires_at]!.trim()
    if (at.stream >= 0 && f[at.stream]!.trim() !== '') l.stream = f[at.stream]!.trim()
    out.push(l)
  }
  return out
}

/** The lines of a JSON body `{"addresses": [{"email", "reason"?, "expires_at"?, "stream"?}, …]}`. */
export function jsonLines (raw: Buffer, contentType: string): ImportLine[] {
  const body = parseJson(raw, contentType) as { addresses?: unknown }
  const addresses = typeof body === 'object' && body !== null && !Array.isArray(body) ? body.addresses : undefined
  if (!Array.isArray(addresses)) {
    throw ApiError.validation([{ field: 'addresses', message: 'must be an array of {email, reason?, expires_at?, stream?}' }])
  }
  const extra = Object.keys(body).filter((k) => k !== 'addresses')
  if (extra.length > 0) throw ApiError.validation([{ field: extra[0]!, message: 'is not a field of an import' }])
  if (addresses.length > IMPORT_MAX_ADDRESSES) throw tooMany()
  return addresses.map((a: unknown, i): ImportLine => {
    if (typeof a !== 'object' || a === null || Array.isArray(a)) {
      return { line: i + 1, email: '', problem: 'must be an object {email, reason?, expires_at?, stream?}' }
    }
    const o = a as Record<string, unknown>
    const unknown = Object.keys(o).find((k) => !(COLUMNS as readonly string[]).includes(k))
    const l: ImportLine = {
      line: i + 1, email: o.email, reason: o.reason ?? undefined, expires_at: o.expires_at ?? undefined, stream: o.stream ?? undefined
    }
    if (unknown !== undefined) l.problem = `${unknown.slice(0, 64)} is not a field of an address`
    return l
  })
}

/**
 * Why the line's `stream` cannot be imported, or the broadcast stream of the entry (undefined: every stream, as
 * for an empty field or `transactional`). A stream the organisation does not have is refused whether or not
 * another organisation has one of that id, so the report tells nothing about other organisations.
 */
function streamOfLine (stream: unknown, streamExists: StreamExists): { stream?: string } | string {
  if (stream === undefined || stream === '') return {}
  if (!isStreamId(stream)) return `stream ${STREAM_ID_MESSAGE}`
  if (!streamExists(stream)) return `stream ${notOrgStreamMessage(stream)}`
  return isBroadcast(stream) ? { stream } : {}
}

/** Why a line of reason `hard_bounce` naming a broadcast stream is refused. */
export const HARD_BOUNCE_ON_STREAM = 'a hard_bounce applies to every stream; leave stream empty'

/** Why the line cannot be imported, or the entry it adds. */
function checkLine (l: ImportLine, now: number, streamExists: StreamExists): ImportEntry | string {
  if (l.problem !== undefined) return l.problem
  if (typeof l.email !== 'string' || !isEmail(l.email.trim())) return 'email is not an address'
  let reason: SuppressionListReason = 'manual'
  if (l.reason !== undefined) {
    if (typeof l.reason !== 'string' || !(SUPPRESSION_REASONS as readonly string[]).includes(l.reason)) {
      return `reason must be one of ${SUPPRESSION_REASONS.join(', ')}`
    }
    reason = l.reason as SuppressionListReason
  }
  const stream = streamOfLine(l.stream, streamExists)
  if (typeof stream === 'string') return stream
  // the engine's hard bounces suppress every stream (an address that does not exist is gone for all mail); an
  // import makes no entry the engine would never make
  if (reason === 'hard_bounce' && stream.stream !== undefined) return HARD_BOUNCE_ON_STREAM
  const entry: ImportEntry = { email: normalizeEmail(l.email), reason, ...stream }
  if (l.expires_at !== undefined) {
    if (reason !== 'manual') return 'expires_at is only for reason manual'
    const e = typeof l.expires_at === 'string' ? expiryOf(l.expires_at, now) : { problem: 'must be a string' }
    if ('problem' in e) return `expires_at ${e.problem}`
    entry.expiresAt = e.iso
  }
  return entry
}

function shown (email: unknown): string {
  return typeof email === 'string' ? email.slice(0, 254) : ''
}

function emptySummary (): ImportSummary {
  return {
    imported: 0,
    already_suppressed: 0,
    refused_count: 0,
    refused: [],
    imported_by_reason: { hard_bounce: 0, complaint: 0, unsubscribe: 0, manual: 0 }
  }
}

const onlyTransactional: StreamExists = (id) => id === TRANSACTIONAL_STREAM

/**
 * Checks every line: the entries to write (each address once per stream) and the summary so far (refused lines; an
 * address's later lines of the same stream count as already suppressed). Linear in the number of lines, with a turn
 * of the event loop every CHECK_SLICE lines.
 */
export async function checkLines (lines: readonly ImportLine[], now = Date.now(), streamExists = onlyTransactional):
Promise<{ entries: ImportEntry[], summary: ImportSummary }> {
  const summary = emptySummary()
  const entries: ImportEntry[] = []
  const seen = new Set<string>()
  for (let i = 0; i < lines.length; i++) {
    if (i > 0 && i % CHECK_SLICE === 0) await new Promise((resolve) => setImmediate(resolve))
    const l = lines[i]!
    const checked = checkLine(l, now, streamExists)
    if (typeof checked === 'string') {
      summary.refused_count++
      if (summary.refused.length < IMPORT_REFUSED_LISTED) summary.refused.push({ line: l.line, email: shown(l.email), reason: checked })
    } else if (seen.has(entryKey(checked))) {
      summary.already_suppressed++
    } else {
      seen.add(entryKey(checked))
      entries.push(checked)
    }
  }
  return { entries, summary }
}

/**
 * The entries of a checked import as one string, a line each of `email`, `reason`, `expires_at` and `stream`
 * separated by tabs: a checked address holds no white space and the other fields are ours, so nothing needs
 * quoting. A string crosses from the thread that checked the import to the event loop as one copy; 100,000
 * entry objects would take the event loop about 200 ms to rebuild.
 */
export function encodeEntries (entries: readonly ImportEntry[]): string {
  let out = ''
  for (const e of entries) out += `${e.email}\t${e.reason}\t${e.expiresAt ?? ''}\t${e.stream ?? ''}\n`
  return out
}

/** The entries of `encodeEntries`, rebuilt DECODE_SLICE at a time with a turn of the event loop between. */
export async function decodeEntries (text: string): Promise<ImportEntry[]> {
  const out: ImportEntry[] = []
  let at = 0
  while (at < text.length) {
    if (out.length > 0 && out.length % DECODE_SLICE === 0) await new Promise((resolve) => setImmediate(resolve))
    const end = text.indexOf('\n', at)
    const [email, reason, expiresAt, stream] = text.slice(at, end).split('\t') as [string, SuppressionListReason, string, string]
    out.push({ email, reason, ...(expiresAt !== '' ? { expiresAt } : {}), ...(stream !== '' ? { stream } : {}) })
    at = end + 1
  }
  return out
}

/** What checking an import body found: the entries to write (encodeEntries) and the summary so far. */
export interface CheckedImport { entries: string, summary: ImportSummary }

/** Reads and checks an import body in one call: the work of the import-check thread (gateway/import_check_pool.ts). */
export async function checkImport (raw: Buffer, contentType: string, streams: readonly string[], now: number): Promise<CheckedImport> {
  const known = new Set(streams)
  const { entries, summary } = await checkLines(importLines(raw, contentType), now, (id) => id === TRANSACTIONAL_STREAM || known.has(id))
  return { entries: encodeEntries(entries), summary }
}

/**
 * Writes the entries of a checked import (SuppressionList.addMany: a window of pipelined writes). Resolves with
 * the one summary of the import and, when a write failed part-way (a full store), its error: the summary then counts
 * what was written before it, and the entries not reached count nowhere.
 */
export async function writeImport (
  cp: ControlPlane, orgId: string, checked: CheckedImport
): Promise<{ summary: ImportSummary, error?: unknown }> {
  const { summary } = checked
  const entries = await decodeEntries(checked.entries)
  const { added, error } = await cp.suppressionLists.addMany(orgId, entries)
  for (let i = 0; i < entries.length; i++) {
    if (added[i] === true) {
      summary.imported++
      summary.imported_by_reason[entries[i]!.reason]++
    } else if (error === undefined) {
      summary.already_suppressed++
    }
  }
  return error === undefined ? { summary } : { summary, error }
}

/** The lines of an import body by its Content-Type: `text/csv`, or JSON. */
export function importLines (raw: Buffer, contentType: string): ImportLine[] {
  if (/^text\/csv\b/i.test(contentType)) return csvLines(raw.toString('utf8'))
  if (/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType)) return jsonLines(raw, contentType)
  throw new ApiError('validation_error', 'Content-Type must be application/json or text/csv.', {
    field: 'Content-Type', errors: [{ field: 'Content-Type', message: 'must be application/json or text/csv' }]
  })
}
