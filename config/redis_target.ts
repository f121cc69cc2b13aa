import type { InternalErrorCode } from '../protocol/mod.ts'
/**
 * `REDIS_URL`, parsed once: one Redis node (`redis://`, `rediss://`) or a master found through Redis Sentinel
 * (`redis+sentinel://[[user]:password@]host[:port],host[:port],.../master-name[/db][?sentinel_password=...]`).
 * Redis Cluster is refused: several Lua scripts touch keys of many organisations and messages at once, which a
 * cluster cannot run on one slot.
 */

export interface SentinelAddress { readonly host: string, readonly port: number }

export type RedisTarget =
  | { readonly kind: 'node', readonly url: string }
  | {
    readonly kind: 'sentinel'
    readonly sentinels: readonly SentinelAddress[]
    /** The master's name as the sentinels know it (`sentinel monitor <name> ...`). */
    readonly masterName: string
    readonly db: number
    readonly username?: string
    /** Password of the master and its replicas. */
    readonly password?: string
    /** Password of the sentinels themselves, when they require one. */
    readonly sentinelPassword?: string
  }

/** Why `REDIS_URL` was refused; the loader turns it into a ConfigError naming the variable. */
export class RedisUrlError extends Error {
  readonly code = 'redis_url_invalid' satisfies InternalErrorCode
}

const SENTINEL_PORT = 26379
const SENTINEL_FORM = 'redis+sentinel://[[user]:password@]host[:port],host[:port]/master-name[/db]'
const CLUSTER_REFUSAL = 'Redis Cluster is not supported (Outbox\'s Lua scripts touch keys of many organisations at once); Sentinel is: ' +
  `use ${SENTINEL_FORM}, or a managed Redis with failover behind one address (see docs/scaling.md)`

function decode (part: string, what: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    throw new RedisUrlError(`has a badly escaped ${what}`)
  }
}

function sentinelAddress (item: string): SentinelAddress {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(item)
  const port = m?.[2] === undefined ? SENTINEL_PORT : Number(m[2])
  if (m === null || port < 1 || port > 65535) {
    throw new RedisUrlError(`has a sentinel address that is not host[:port] (${JSON.stringify(item)})`)
  }
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port }
}

function parseSentinel (rest: string): RedisTarget {
  const queryAt = rest.indexOf('?')
  const query = new URLSearchParams(queryAt === -1 ? '' : rest.slice(queryAt + 1))
  const main = queryAt === -1 ? rest : rest.slice(0, queryAt)
  const slash = main.indexOf('/')
  const authority = slash === -1 ? main : main.slice(0, slash)
  const path = slash === -1 ? [] : main.slice(slash + 1).split('/')
  const at = authority.lastIndexOf('@')
  const userinfo = at === -1 ? undefined : authority.slice(0, at)
  const hosts = (at === -1 ? authority : authority.slice(at + 1)).split(',').map((s) => s.trim())
  if (hosts.some((h) => h === '')) throw new RedisUrlError(`must list at least one sentinel: ${SENTINEL_FORM}`)
  const sentinels = hosts.map(sentinelAddress)
  const masterName = decode(path[0] ?? '', 'master name')
  if (masterName === '') throw new RedisUrlError(`must name the master the sentinels monitor: ${SENTINEL_FORM}`)
  if (path.length > 2 || (path.length === 2 && !/^\d{1,2}$/.test(path[1]!))) throw new RedisUrlError(`may end in a database number only (0-99) after the master name: ${SENTINEL_FORM}`)
  for (const name of query.keys()) {
    if (name !== 'sentinel_password') {
      throw new RedisUrlError(`has an unknown parameter ${JSON.stringify(name)} (only sentinel_password is known)`)
    }
  }
  let username: string | undefined
  let password: string | undefined
  if (userinfo !== undefined) {
    const colon = userinfo.indexOf(':')
    username = decode(colon === -1 ? userinfo : userinfo.slice(0, colon), 'user name')
    password = colon === -1 ? undefined : decode(userinfo.slice(colon + 1), 'password')
  }
  const sentinelPassword = query.get('sentinel_password') ?? undefined
  return {
    kind: 'sentinel',
    sentinels,
    masterName,
    db: path.length === 2 ? Number(path[1]) : 0,
    ...(username !== undefined && username !== '' ? { username } : {}),
    ...(password !== undefined && password !== '' ? { password } : {}),
    ...(sentinelPassword !== undefined && sentinelPassword !== '' ? { sentinelPassword } : {})
  }
}

/** Throws RedisUrlError (message without the variable name) when the URL is not one Outbox can use. */
export function parseRedisUrl (url: string): RedisTarget {
  if (/\s/.test(url)) throw new RedisUrlError('must not contain spaces')
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase()
  if (scheme === 'redis+sentinel') return parseSentinel(url.slice(url.indexOf('://') + 3))
  if (scheme === 'redis+cluster' || scheme === 'rediss+cluster' || scheme === 'redis-cluster') {
    throw new RedisUrlError(`names a Redis Cluster: ${CLUSTER_REFUSAL}`)
  }
  if (scheme === 'redis-sentinel' || scheme === 'rediss+sentinel' || scheme === 'sentinel') {
    throw new RedisUrlError(`uses an unknown scheme ${scheme}://; Sentinel is written ${SENTINEL_FORM} (TLS to sentinels is not supported)`)
  }
  if (scheme !== 'redis' && scheme !== 'rediss') throw new RedisUrlError(`must start with redis://, rediss:// or redis+sentinel:// (got ${scheme === undefined ? 'no scheme' : scheme + '://'})`)
  const authority = url.slice(url.indexOf('://') + 3).split(/[/?#]/)[0]!
  if (authority.slice(authority.lastIndexOf('@') + 1).includes(',')) throw new RedisUrlError(`lists several servers: ${CLUSTER_REFUSAL}`)
  try {
    // eslint-disable-next-line no-new
    new URL(url)
  } catch {
    throw new RedisUrlError('is not a valid URL')
  }
  return { kind: 'node', url }
}

/** The target for logs and error messages: passwords masked. */
export function describeRedisTarget (target: RedisTarget): string {
  if (target.kind === 'node') {
    try {
      const u = new URL(target.url)
      if (u.password !== '') u.password = '***'
      return u.toString().replace(/\/$/, '')
    } catch {
      return target.url
    }
  }
  return `redis+sentinel://${target.sentinels.map((s) => s.host.includes(':') ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`).join(',')}/${target.masterName}`
}
