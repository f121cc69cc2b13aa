import { OutboxClient, OutboxApiError, OutboxConnectionError, type GetWhoamiResponse } from '../../client/src/mod.ts'

import { egressLanes } from './operator_api.ts'

const STORAGE_KEY = 'outbox.dashboard.key'

const OPERATOR_PREFIX = 'ob_op_'
/** What lists show of a key: its first 12 characters (`ob_op_` and 6 more for an operator key). */
const DISPLAY_PREFIX_LENGTH = 12

export type Permission = 'read' | 'manage' | 'send' | 'admin' | 'operator'

/** A signed-in key: its client and what it may do. The key lives only in sessionStorage (gone with the tab). */
export interface Session {
  key: string
  client: OutboxClient
  /**
   * An operator key (`ob_op_…`) belongs to no organisation (whoami answers 401 for it): it sees only the operator
   * views, and `me` names the key by its display prefix, with no organisation, domain or permissions.
   */
  operator: boolean
  me: GetWhoamiResponse
  /** `admin` grants every organisation permission, never `operator`, which only an operator key holds. */
  can: (permission: Permission) => boolean
}

function clientFor (key: string): OutboxClient {
  // A dashboard user waits at the screen: retry briefly, never for long.
  return new OutboxClient({ apiKey: key, baseUrl: location.origin, retry: { maxAttempts: 2, maxRetryAfterMs: 5000 } })
}

/**
 * GET /v1/whoami needs `read`. A key with `manage` but not `read` finds itself in its organisation's key list
 * instead (by its prefix and last 4 characters); any other key gets whoami's own error (403 for a send-only key).
 */
async function describe (client: OutboxClient, key: string): Promise<GetWhoamiResponse> {
  try {
    return await client.whoami.get()
  } catch (err) {
    if (!(err instanceof OutboxApiError) || err.status !== 403) throw err
    let cursor: string | undefined
    try {
      do {
        const page = await client.apiKeys.list({ limit: 100, cursor })
        const self = page.data.find((k) => k.prefix === key.slice(0, k.prefix.length) && key.endsWith(k.last4))
        if (self !== undefined) {
          const domain = await client.domains.get(self.domain_id)
          return {
            key_id: self.id,
            key_name: self.name,
            permissions: self.permissions,
            environment: self.environment,
            organization_id: '',
            domain_id: self.domain_id,
            domain: domain.name,
            plan: '',
            rate_limit_per_minute: 0
          }
        }
        cursor = page.next_cursor ?? undefined
      } while (cursor !== undefined)
    } catch { /* no manage either */ }
    throw err
  }
}

/**
 * An operator key is checked with the operator API it is for (GET /v1/operator/egress/lanes): its 401 (unknown,
 * revoked) or 403 is the API's own answer, as whoami's is for an organisation key.
 */
async function operatorSession (key: string): Promise<Session> {
  const client = clientFor(key)
  await egressLanes(client)
  const me: GetWhoamiResponse = {
    key_id: '',
    key_name: `Operator key ${key.slice(0, DISPLAY_PREFIX_LENGTH)}…`,
    permissions: [],
    environment: 'live',
    organization_id: '',
    domain_id: '',
    domain: '',
    plan: '',
    rate_limit_per_minute: 0
  }
  return { key, client, operator: true, me, can: (p) => p === 'operator' }
}

/** Checks the key with GET /v1/whoami (an operator key with the operator API); throws the API's error (401 for a bad key). */
export async function signIn (key: string): Promise<Session> {
  const trimmed = key.trim()
  if (!trimmed.startsWith('ob_')) {
    const message = 'An API key starts with ob_live_ or ob_test_ (an operator key with ob_op_).'
    throw new OutboxApiError(401, { code: 'unauthorized', message })
  }
  if (trimmed.startsWith(OPERATOR_PREFIX)) {
    const session = await operatorSession(trimmed)
    sessionStorage.setItem(STORAGE_KEY, trimmed)
    return session
  }
  const client = clientFor(trimmed)
  const me = await describe(client, trimmed)
  sessionStorage.setItem(STORAGE_KEY, trimmed)
  const perms = new Set<string>(me.permissions)
  return { key: trimmed, client, operator: false, me, can: (p) => p !== 'operator' && (perms.has('admin') || perms.has(p)) }
}

export function storedKey (): string | null {
  return sessionStorage.getItem(STORAGE_KEY)
}

export function signOut (): void {
  sessionStorage.removeItem(STORAGE_KEY)
}

/** A failure that says nothing about the key: no answer, or 408, 429 or 5xx. Only a 401 means the key is bad. */
export function transient (err: unknown): boolean {
  if (err instanceof OutboxConnectionError) return true
  return err instanceof OutboxApiError && (err.status === 408 || err.status === 429 || err.status >= 500)
}

/** The API refused the key itself (unknown, revoked or expired): the one answer that ends a stored session. */
export function keyRefused (err: unknown): boolean {
  return err instanceof OutboxApiError && err.status === 401
}
