import { parseArgs, type ParseArgsConfig } from 'node:util'
import { DEFAULT_POOL, egressPoolOf, parseLimitAssignments } from '../protocol/mod.ts'
import type { ControlPlane } from '../stores/control_plane/mod.ts'
import { CliError } from './binaries.ts'
import { withControlPlane } from './control_plane_session.ts'
import type { CliAuditTrail } from './audit_trail.ts'
import { loadConfig } from '../config/mod.ts'
import { newRedis } from '../stores/clients/mod.ts'
import { EgressState, laneViews } from '../stores/egress/mod.ts'
import { EGRESS_USAGE } from './usage.ts'

type Env = Readonly<Record<string, string | undefined>>

function usage (why: string): CliError {
  return new CliError(`outbox: ${why}\n${EGRESS_USAGE}`, 2)
}

/** Runs one piece of work against the control plane, with the audit trail of the command. */
type Run = <T>(work: (cp: ControlPlane, audit: CliAuditTrail) => Promise<T> | T) => Promise<T>

type Parsed = { values: Record<string, string | boolean | undefined>, positionals: string[] }

function options (args: string[], opts: NonNullable<ParseArgsConfig['options']>, positionals = 0): Parsed {
  try {
    const parsed = parseArgs({ args, options: opts, strict: true, allowPositionals: true }) as Parsed
    if (parsed.positionals.length !== positionals) throw new Error(`expected ${positionals} name(s), got "${parsed.positionals.join(' ')}"`)
    return parsed
  } catch (err) {
    throw usage((err as Error).message)
  }
}

/**
 * `outbox egress …`: the operator's egress configuration, written through the same control-plane writer as the
 * operator API (stores/control_plane/egress_config.ts), so both refuse the same input with the same words; each change
 * records the audit entry of its operator route.
 */
export async function runEgress (args: string[], env: Env): Promise<unknown> {
  const [what, action, ...rest] = args
  const run: Run = async (work) => await withControlPlane(env, EGRESS_USAGE, async (cp, audit) => await work(cp, audit))
  if (what === 'source') {
    if (action === 'add') {
      const { values, positionals } = options(rest, {
        address: { type: 'string' }, ehlo: { type: 'string' }, warmup: { type: 'boolean' }
      }, 1)
      if (values.address === undefined || values.ehlo === undefined) throw usage('source add needs --address and --ehlo')
      const input = {
        name: positionals[0]!, address: String(values.address), ehlo: String(values.ehlo).toLowerCase(),
        ...(values.warmup === true ? { warmup: {} } : {})
      }
      return await run(async (cp, audit) => {
        const source = await cp.egress.addSource(input)
        await audit.asRoute('egress source add', { body: input, reply: source })
        return source
      })
    }
    if (action === 'list' && rest.length === 0) return await run((cp) => cp.egress.sources())
    if (action === 'remove' && rest.length === 1) {
      const name = rest[0]!
      return await run(async (cp, audit) => {
        const removed = await cp.egress.removeSource(name)
        await audit.asRoute('egress source remove', { params: { name }, reply: removed })
        return removed
      })
    }
  }
  if (what === 'pool') {
    if (action === 'set' && rest.length >= 2) {
      const [name, ...members] = rest
      const sources = members.map((m) => {
        const colon = m.lastIndexOf(':')
        if (colon < 0) return { source: m }
        const weight = m.slice(colon + 1)
        return { source: m.slice(0, colon), weight: /^\d+$/.test(weight) ? Number(weight) : Number.NaN }
      })
      return await run(async (cp, audit) => {
        const pool = await cp.egress.putPool(name!, sources)
        await audit.asRoute('egress pool set', { params: { name: name! }, body: { sources }, reply: pool })
        return pool
      })
    }
    if (action === 'list' && rest.length === 0) return await run((cp) => cp.egress.pools())
    if (action === 'remove' && rest.length === 1) {
      const name = rest[0]!
      return await run(async (cp, audit) => {
        if (cp.egress.pool(name) === undefined) throw new CliError(`outbox: no pool named ${name}`)
        await cp.egress.removePool(name)
        await audit.asRoute('egress pool remove', { params: { name } })
        return { removed: name }
      })
    }
  }
  if (what === 'assign') return await assign(args.slice(1), run)
  if (what === 'lanes' && action === undefined) return await run(async (cp) => ({ data: await lanes(cp, env) }))
  if (what === 'limits') return await limits(action, rest, run)
  throw usage(what === undefined ? 'say what to change: source, pool, assign or limits' : `unknown arguments "${args.join(' ')}"`)
}

/**
 * `limits show|set`: the installation's overrides, or with `--source <name>` one source's own (over the installation's).
 * `set` changes the keys it names of one provider's entry (`key=` removes one).
 */
async function limits (action: string | undefined, args: string[], run: Run): Promise<unknown> {
  const at = args.indexOf('--source')
  const source = at < 0 ? undefined : args[at + 1]
  if (at >= 0 && (source === undefined || source.startsWith('--'))) throw usage('--source needs a source name')
  const words = at < 0 ? args : [...args.slice(0, at), ...args.slice(at + 2)]
  if (action === 'show' && words.length === 0) {
    return await run((cp) => {
      if (source === undefined) return { limits: cp.egress.settings().limits ?? {} }
      const s = cp.egress.source(source)
      if (s === undefined) throw new CliError(`outbox: no source named ${source}`)
      return { source: s.name, limits: s.limits ?? {} }
    })
  }
  if (action === 'set' && words.length >= 2) {
    const [provider, ...assignments] = words
    const parsed = parseLimitAssignments(assignments)
    if (parsed.errors.length > 0) throw usage(parsed.errors.map((e) => `${e.field} ${e.message}`).join('; '))
    // the routes replace the whole set and record it: the entry holds the set after this change, in the same shape
    return await run(async (cp, audit) => {
      if (source === undefined) {
        const after = { limits: (await cp.egress.setProviderLimits(provider!, parsed.set, parsed.unset)).limits ?? {} }
        await audit.asRoute('egress limits set', { body: after, reply: after })
        return after
      }
      const s = await cp.egress.setSourceProviderLimits(source, provider!, parsed.set, parsed.unset)
      const after = { source: s.name, limits: s.limits ?? {} }
      await audit.asRoute('egress limits set --source', { params: { name: s.name }, body: { limits: after.limits }, reply: after })
      return after
    })
  }
  throw usage(`unknown arguments "limits ${[action, ...args].join(' ')}"`)
}

async function assign (args: string[], run: Run): Promise<Record<string, unknown>> {
  const { values } = options(args, {
    org: { type: 'string' }, domain: { type: 'string' }, stream: { type: 'string' }, pool: { type: 'string' }, inherit: { type: 'boolean' }
  })
  if (values.org === undefined) throw usage('assign needs --org')
  if ((values.pool === undefined) === (values.inherit !== true)) throw usage('assign needs either --pool or --inherit')
  if (values.domain !== undefined && values.stream !== undefined) throw usage('assign takes --domain or --stream, not both')
  if (values.inherit === true && values.domain === undefined && values.stream === undefined) {
    throw usage('--inherit applies to a domain (--domain) or a stream (--stream)')
  }
  const orgId = String(values.org)
  const pool = values.inherit === true ? null : String(values.pool)
  // the entry's body is what the route's caller sends for the same change: `{ pool }`, null to inherit
  const body = { pool }
  return await run(async (cp, audit) => {
    if (values.stream !== undefined) {
      const stream = await cp.egress.assignStream(orgId, String(values.stream), pool)
      await audit.asRoute('egress assign --stream', { params: { id: orgId, stream: String(values.stream) }, body })
      return { organization_id: orgId, stream: stream.id, egress_pool: stream.egress_pool ?? null }
    }
    if (values.domain === undefined) {
      const org = await cp.egress.assignOrg(orgId, pool === DEFAULT_POOL ? null : pool)
      await audit.asRoute('egress assign --org', { params: { id: orgId }, body })
      return { organization_id: org.id, egress_pool: org.egress_pool ?? DEFAULT_POOL }
    }
    const domain = await cp.egress.assignDomain(orgId, String(values.domain), pool)
    await audit.asRoute('egress assign --domain', { params: { id: orgId, domain_id: String(values.domain) }, body })
    const org = cp.orgs.get(orgId)!
    return {
      organization_id: orgId, domain_id: domain.id, egress_pool: domain.egress_pool ?? null, effective_pool: egressPoolOf(org, domain)
    }
  })
}

/** Every egress lane as it runs (the operator API's GET /v1/operator/egress/lanes), read from the shared Redis. */
async function lanes (cp: ControlPlane, env: Env): Promise<unknown[]> {
  const config = loadConfig(env)
  const redis = newRedis(config.redis.target, { connectionName: 'outbox-cli', maxRetriesPerRequest: 1, commandTimeout: 5000 })
  redis.on('error', () => {})
  try {
    // the engines' recovery period; no listener, so it claims no recovery step (the engines log and count those)
    const state = new EgressState(redis, Date.now, { recoverEveryMs: config.smtp.egressRecoverEveryMs })
    return await laneViews(state, (name) => cp.egress.source(name), cp.egress.settings())
  } finally {
    redis.disconnect()
  }
}
