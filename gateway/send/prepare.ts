import {
  ApiError, MAX_RECIPIENTS, MAX_SCHEDULE_AHEAD_MS, QUEUED_FORMAT_VERSION, addressDomain, bareAddress, isReservedHeader, missingVariables,
  newId, spoofedDisplayAddress, streamPausedError, TRANSACTIONAL_STREAM, type FieldError, type QueuedMessage, type SendRequest, uniqueTags,
  queuedHosts
} from '../../protocol/mod.ts'
import { type ControlPlane } from '../../stores/control_plane/mod.ts'
import type { AuthContext } from '../auth.ts'

/**
 * A `scheduled_at` at most this far in the past (clock skew between the caller and us) means "send now"; one
 * further back is refused. A time in the future, however near, is kept: the message waits for it.
 */
export const SCHEDULE_SKEW_MS = 60_000 // 60 s

export type SendStatus = 'queued' | 'scheduled'

export interface PreparedMessage {
  msg: QueuedMessage
  status: SendStatus
}

/** A request item that is valid but has no recipient left once suppressed addresses are dropped. */
export interface AllSuppressed { suppressed: string[] }

/**
 * Collects problems across one request or every batch item, so a batch answers with all of its field errors
 * at once; 400s win over the first 403/422 found, because they are what the caller must fix first.
 */
export class Problems {
  readonly fields: FieldError[] = []
  other?: ApiError

  field (field: string, message: string): void {
    this.fields.push({ field, message })
  }

  refuse (err: ApiError): void {
    this.other ??= err
  }

  throwIfAny (): void {
    if (this.fields.length > 0) throw ApiError.validation(this.fields)
    if (this.other !== undefined) throw this.other
  }
}

function list (value: string | string[] | undefined): string[] {
  return value === undefined ? [] : typeof value === 'string' ? [value] : value
}

/**
 * Turns one schema-valid send request into the message the engine reads: the checks the schema cannot express
 * (reserved headers, body or template, schedule window, domain binding, template ownership), then suppression.
 * `prefix` names fields of batch items (`messages[3].`); `id` is given when a retry reuses the id of a failed
 * attempt. Returns undefined when it recorded a problem.
 */
export function prepareMessage (
  req: SendRequest, auth: AuthContext, cp: ControlPlane, nowMs: number, createdAt: string, prefix: string, problems: Problems,
  id?: string | null
): PreparedMessage | AllSuppressed | undefined {
  const before = problems.fields.length
  const to = list(req.to)
  const cc = list(req.cc)
  const bcc = list(req.bcc)
  if (to.length + cc.length + bcc.length > MAX_RECIPIENTS) {
    problems.field(prefix + 'to', `to, cc and bcc together may hold at most ${MAX_RECIPIENTS} recipients`)
  }
  if (req.headers !== undefined) {
    for (const name in req.headers) {
      if (isReservedHeader(name)) {
        problems.field(
          `${prefix}headers.${name}`,
          `${name} is reserved (written by Outbox or by the servers the message passes through) and may not be given in headers`
        )
      }
    }
  }
  const shown = spoofedDisplayAddress(req.from)
  if (shown !== undefined) {
    problems.field(
      prefix + 'from',
      `the display name shows the address ${shown}, which is not the sender's; use a plain name or the sender's own address`
    )
  }
  if (req.template_id !== undefined) {
    if (req.html !== undefined || req.text !== undefined) {
      problems.field(prefix + 'template_id', 'cannot be combined with html or text; the template supplies the body')
    }
  } else {
    if (req.html === undefined && req.text === undefined) {
      problems.field(prefix + 'html', 'html or text is required unless template_id is given')
    }
    if (req.subject === undefined) problems.field(prefix + 'subject', 'is required unless template_id is given')
    if (req.variables !== undefined) problems.field(prefix + 'variables', 'is only allowed together with template_id')
    if (req.allow_missing_variables !== undefined) {
      problems.field(prefix + 'allow_missing_variables', 'is only allowed together with template_id')
    }
  }
  const contentIds = new Set<string>()
  for (const [i, a] of (req.attachments ?? []).entries()) {
    if (a.content_id === undefined) continue
    // compared as receivers compare Content-IDs (case-insensitively), so two parts never claim one cid: reference
    const cid = a.content_id.toLowerCase()
    if (contentIds.has(cid)) problems.field(`${prefix}attachments[${i}].content_id`, 'must be unique within the message')
    contentIds.add(cid)
  }
  let scheduled = false
  if (req.scheduled_at !== undefined) {
    const at = Date.parse(req.scheduled_at)
    if (Number.isNaN(at)) problems.field(prefix + 'scheduled_at', 'must be an ISO 8601 date-time')
    else if (at < nowMs - SCHEDULE_SKEW_MS) problems.field(prefix + 'scheduled_at', 'must not be in the past')
    else if (at > nowMs + MAX_SCHEDULE_AHEAD_MS) problems.field(prefix + 'scheduled_at', 'must be at most 72 hours ahead')
    else scheduled = at > nowMs
  }
  if (problems.fields.length > before) return undefined

  const domain = auth.domain
  if (addressDomain(req.from) !== domain.name.toLowerCase()) {
    problems.refuse(new ApiError('forbidden', `The from address must be on ${domain.name}, the domain of this API key.`, {
      field: prefix + 'from', details: { key_domain: domain.name, from_domain: addressDomain(req.from) }
    }))
    return undefined
  }
  if (domain.status !== 'verified') {
    problems.refuse(new ApiError(
      'forbidden',
      `The domain ${domain.name} is not verified yet; publish its DNS records and call POST /v1/domains/${domain.id}/verify.`,
      { field: prefix + 'from', details: { domain_id: domain.id, status: domain.status } }
    ))
    return undefined
  }
  const orgId = auth.org.id
  const stream = req.stream ?? auth.key.default_stream ?? TRANSACTIONAL_STREAM
  if (!cp.streams.exists(orgId, stream)) {
    problems.refuse(new ApiError('stream_not_found', `The organisation has no message stream ${stream}; create it with POST /v1/streams.`, {
      field: prefix + 'stream', details: { stream }
    }))
    return undefined
  }
  // A paused stream refuses live sends (docs/reputation.md): a look-up in the mirrored control plane, no round trip.
  // Sandbox messages reach nobody and never count, so a pause does not refuse them.
  const pause = auth.key.environment === 'live' ? cp.pauses.paused(orgId, stream) : undefined
  if (pause !== undefined) {
    problems.refuse(streamPausedError(pause))
    return undefined
  }
  let subject = req.subject
  let html = req.html
  let text = req.text
  if (req.template_id !== undefined) {
    const template = cp.templates.get(`${orgId}.${req.template_id}`)
    if (template === undefined) {
      problems.refuse(new ApiError('unprocessable', `No template ${req.template_id} in this organisation.`, {
        field: prefix + 'template_id'
      }))
      return undefined
    }
    // A copy of the template's text travels in the message, placeholders and all; the engine renders exactly
    // that, so editing or deleting the template later does not change a message already accepted.
    subject ??= template.subject
    html = template.html
    text = template.text
    // A blank where a name should be reaches the recipient and cannot be taken back: refused unless asked for.
    const missing = req.allow_missing_variables === true ? [] : missingVariables({ subject, html, text }, req.variables)
    if (missing.length > 0) {
      problems.refuse(new ApiError('unprocessable', `The template uses variables this send does not give: ${missing.join(', ')}. ` +
        'Give them in "variables", or send with "allow_missing_variables": true to render them blank.', {
        field: prefix + 'variables', details: { missing }
      }))
      return undefined
    }
  }

  const suppressed: string[] = []
  const suppressedReasons: string[] = []
  // The sandbox simulates events, not list state: the organisation's list neither blocks nor drops its recipients.
  const checkList = auth.key.environment === 'live'
  const keep = (addrs: string[]): string[] => {
    const out: string[] = []
    for (const a of addrs) {
      const bare = bareAddress(a)
      const reason = checkList ? cp.suppressionReason(orgId, bare, stream) : undefined
      if (reason !== undefined) {
        suppressed.push(bare)
        suppressedReasons.push(reason)
      } else out.push(a)
    }
    return out
  }
  const toKept = keep(to)
  const ccKept = keep(cc)
  const bccKept = keep(bcc)
  if (toKept.length + ccKept.length + bccKept.length === 0) return { suppressed }

  const msg: QueuedMessage = {
    v: QUEUED_FORMAT_VERSION,
    id: id ?? newId('msg', nowMs),
    org_id: orgId,
    domain_id: domain.id,
    key_id: auth.key.id,
    environment: auth.key.environment,
    from: req.from,
    to: toKept,
    cc: ccKept,
    bcc: bccKept,
    subject: subject ?? '',
    headers: req.headers ?? {},
    metadata: req.metadata ?? {},
    ...(req.tags !== undefined && req.tags.length > 0 ? { tags: uniqueTags(req.tags) } : {}),
    attachments: req.attachments ?? [],
    track_opens: req.track_opens ?? true,
    track_clicks: req.track_clicks ?? true,
    suppressed,
    ...(suppressed.length > 0 ? { suppressed_reasons: suppressedReasons } : {}),
    created_at: createdAt,
    ...queuedHosts(domain),
    stream
  }
  if (req.reply_to !== undefined) msg.reply_to = req.reply_to
  if (html !== undefined) msg.html = html
  if (text !== undefined) msg.text = text
  if (req.template_id !== undefined) {
    msg.template_id = req.template_id
    msg.variables = req.variables ?? {}
  }
  if (scheduled) msg.scheduled_at = new Date(Date.parse(req.scheduled_at!)).toISOString()
  return { msg, status: scheduled ? 'scheduled' : 'queued' }
}

export function isPrepared (p: PreparedMessage | AllSuppressed | undefined): p is PreparedMessage {
  return p !== undefined && 'msg' in p
}
