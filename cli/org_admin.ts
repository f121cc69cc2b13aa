import { parseArgs, type ParseArgsConfig } from 'node:util'
import { loadConfig, type Config } from '../config/mod.ts'
import { PLANS, isSuspended, type PlanName } from '../protocol/mod.ts'
import type { ControlPlane } from '../stores/control_plane/mod.ts'
import { countsByOrg, deleteOrganization, orgDetail, orgView, requireOrg, resetAdminKey } from '../gateway/control/org_admin.ts'
import { CliError } from './binaries.ts'
import { withControlPlane } from './control_plane_session.ts'
import type { CliAuditTrail } from './audit_trail.ts'
import { ORG_ADMIN_USAGE } from './usage.ts'

type Env = Readonly<Record<string, string | undefined>>

function usage (why: string): CliError {
  return new CliError(`outbox: ${why}\n${ORG_ADMIN_USAGE}`, 2)
}

function parse (args: string[], options: NonNullable<ParseArgsConfig['options']>, positionals: number): {
  values: Record<string, string | boolean | undefined>, positionals: string[]
} {
  try {
    const parsed = parseArgs({ args, options, strict: true, allowPositionals: true })
    if (parsed.positionals.length !== positionals) {
      throw new Error(`expected ${positionals} argument(s), got "${parsed.positionals.join(' ')}"`)
    }
    return parsed as { values: Record<string, string | boolean | undefined>, positionals: string[] }
  } catch (err) {
    throw usage((err as Error).message)
  }
}

/**
 * `outbox org list | show | plan | suspend | resume | reset-admin-key | delete`: the operator's organisation
 * commands, through the same writers as the operator API (`/v1/operator/organizations…`), so both answer alike, and
 * each change records the audit entry of its route. Each prints one JSON line. `org create` is cli/org_create.ts.
 */
export async function runOrgAdmin (args: string[], env: Env): Promise<unknown> {
  const [action, ...rest] = args
  const run = async <T>(work: (cp: ControlPlane, audit: CliAuditTrail) => Promise<T> | T): Promise<T> =>
    await withControlPlane(env, ORG_ADMIN_USAGE, async (cp, audit) => await work(cp, audit))
  // read after the arguments are checked, so a usage error is told first
  let loaded: Config | undefined
  const config = (): Config => (loaded ??= loadConfig(env))
  switch (action) {
    case 'list': {
      const { values } = parse(rest, { status: { type: 'string' } }, 0)
      const status = values.status
      if (status !== undefined && status !== 'active' && status !== 'suspended') throw usage('--status must be active or suspended')
      return await run((cp) => {
        const counts = countsByOrg(cp)
        return cp.orgs.list()
          .filter((o) => status === undefined || (status === 'suspended') === isSuspended(o))
          .map((o) => orgView(o, config(), counts.get(o.id) ?? { api_keys: 0, domains: 0, webhooks: 0 }))
      })
    }
    case 'show': {
      const id = parse(rest, {}, 1).positionals[0]!
      return await run((cp) => orgDetail(cp, config(), requireOrg(cp, id)))
    }
    case 'plan': {
      const { values, positionals } = parse(rest, { 'rate-limit': { type: 'string' } }, 2)
      const [id, plan] = positionals as [string, string]
      if (!(PLANS as readonly string[]).includes(plan)) throw usage(`the plan must be one of ${PLANS.join(', ')}`)
      const raw = values['rate-limit']
      // the range and the plan it goes with are checked by the one writer, as for the API (exit 2 naming the field)
      const rate = raw === undefined ? undefined : /^\d+$/.test(String(raw)) ? Number(raw) : Number.NaN
      const input = { plan: plan as PlanName, ...(rate !== undefined ? { rate_limit_per_minute: rate } : {}) }
      return await run(async (cp, audit) => {
        const org = await cp.organizations.setPlan(id, input)
        await audit.asRoute('org plan', { params: { id }, body: input })
        return orgDetail(cp, config(), org)
      })
    }
    case 'suspend':
    case 'resume': {
      const id = parse(rest, {}, 1).positionals[0]!
      return await run(async (cp, audit) => {
        const org = action === 'suspend' ? await cp.organizations.suspend(id) : await cp.organizations.resume(id)
        await audit.asRoute(action === 'suspend' ? 'org suspend' : 'org resume', { params: { id } })
        return orgDetail(cp, config(), org)
      })
    }
    case 'reset-admin-key': {
      const id = parse(rest, {}, 1).positionals[0]!
      return await run(async (cp, audit) => {
        const reset = await resetAdminKey(cp, id)
        await audit.asRoute('org reset-admin-key', { params: { id }, reply: reset })
        return reset
      })
    }
    case 'delete': {
      const { values, positionals } = parse(rest, { yes: { type: 'boolean' } }, 1)
      if (values.yes !== true) throw usage('deleting an organisation cannot be undone: add --yes')
      const id = positionals[0]!
      return await run(async (cp, audit) => {
        const deleted = await deleteOrganization(cp, id)
        await audit.asRoute('org delete', { params: { id }, reply: deleted })
        return deleted
      })
    }
  }
  throw usage(action === undefined
    ? 'say what to do: list, show, plan, suspend, resume, reset-admin-key or delete'
    : `unknown arguments "${args.join(' ')}"`)
}
