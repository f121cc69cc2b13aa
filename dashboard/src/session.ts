import { OutboxClient, OutboxApiError, type GetWhoamiResponse } from '../../client/src/mod.ts'

const STORAGE_KEY = 'outbox.dashboard.key'

/** A signed-in key: its client and what it may do. The key lives only in sessionStorage (gone with the tab). */
export interface Session {
  key: string
  client: OutboxClient
  me: GetWhoamiResponse
  can: (permission: 'read' | 'manage' | 'send' | 'admin') => boolean
}

function clientFor (key: string): OutboxClient {
  // A dashboard user waits at the screen: retry briefly, never for long.
  return new OutboxClient({ apiKey: key, baseUrl: location.origin, retry: { maxAttempts: 2, maxRetryAfterMs: 5000 } })
}

/** Checks the key with GET /v1/whoami; throws the API's error (401 for a bad key). */
export async function signIn (key: string): Promise<Session> {
  const trimmed = key.trim()
  if (!trimmed.startsWith('ob_')) {
    throw new OutboxApiError(401, { code: 'unauthorized', message: 'An API key starts with ob_live_ or ob_test_.' })
  }
  const client = clientFor(trimmed)
  const me = await client.whoami.get()
  sessionStorage.setItem(STORAGE_KEY, trimmed)
  const perms = new Set(me.permissions)
  return { key: trimmed, client, me, can: (p) => perms.has('admin') || perms.has(p) }
}

export function storedKey (): string | null {
  return sessionStorage.getItem(STORAGE_KEY)
}

export function signOut (): void {
  sessionStorage.removeItem(STORAGE_KEY)
}
