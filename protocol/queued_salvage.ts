import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { Address } from './send.ts'
import { QueuedMessage } from './queued_message.ts'

/**
 * What can still be read of a queued message that fails its schema in a format the engine reads (a known field of
 * the wrong type, a missing one): enough to end it with a `failed` event for each recipient it names, so its
 * owner sees why it was never sent. A message is only ever ended with such an event; one that names no
 * organisation, no message id or no readable recipient has nobody to tell, and `salvageQueued` gives undefined.
 *
 * Every field that passes its own schema is kept as it is; a required one that does not is replaced by an empty
 * value (never sent: the message ends here), an optional one is left out. Recipients are kept one by one.
 */

type Check = (value: unknown) => boolean

// Compiled on first use: only a broken message comes here, and most processes never see one.
let checks: Map<string, Check> | undefined
let addressCheck: Check | undefined

function fieldChecks (): Map<string, Check> {
  if (checks === undefined) {
    checks = new Map()
    for (const [key, schema] of Object.entries(QueuedMessage.properties)) {
      const compiled = Compile(schema as TSchema)
      checks.set(key, (value) => compiled.Check(value))
    }
  }
  return checks
}

const ZERO_ID = '0'.repeat(26)
const RECIPIENT_FIELDS = new Set(['to', 'cc', 'bcc'])

/** The value of a required field that failed its own check: empty, and of its type. */
function emptyOf (key: string): unknown {
  switch (key) {
    case 'domain_id': return `dom_${ZERO_ID}`
    case 'key_id': return `key_${ZERO_ID}`
    case 'environment': return 'live'
    case 'from': case 'subject': return ''
    case 'headers': case 'metadata': return {}
    case 'attachments': case 'suppressed': return []
    case 'track_opens': case 'track_clicks': return false
    case 'created_at': return new Date().toISOString()
    default: return undefined
  }
}

/** The valid addresses of a recipient field; a single address where a list belongs counts as one. */
function addresses (value: unknown): string[] {
  if (typeof value === 'string') value = [value]
  if (!Array.isArray(value)) return []
  if (addressCheck === undefined) {
    const compiled = Compile(Address)
    addressCheck = (v) => compiled.Check(v)
  }
  const check = addressCheck
  return value.filter((a): a is string => check(a))
}

/** The readable part of a broken queued message `value`, or undefined when it names nobody to tell. */
export function salvageQueued (value: unknown): QueuedMessage | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const input = value as Record<string, unknown>
  const out: Record<string, unknown> = {}
  const required = new Set<string>(QueuedMessage.required ?? [])
  for (const [key, check] of fieldChecks()) {
    const v = input[key]
    if (RECIPIENT_FIELDS.has(key)) out[key] = addresses(v)
    else if (check(v) && v !== undefined) out[key] = v
    else if (required.has(key)) out[key] = emptyOf(key)
  }
  if (!fieldChecks().get('id')!(input.id) || !fieldChecks().get('org_id')!(input.org_id)) return undefined
  if ((out.to as string[]).length + (out.cc as string[]).length + (out.bcc as string[]).length === 0) return undefined
  // the body is never sent; an empty text keeps the message a QueuedMessage for the code that records its ending
  if (out.html === undefined && out.text === undefined && out.submitted === undefined && out.content_ref === undefined) out.text = ''
  return out as QueuedMessage
}
