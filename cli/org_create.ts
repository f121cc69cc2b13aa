import { parseArgs } from 'node:util'
import { loadConfig, type Plan } from '../config/mod.ts'
import { ApiError, PLANS } from '../protocol/mod.ts'
import { createOrganization, type CreatedOrganization } from '../gateway/control/orgs.ts'
import { CliError } from './binaries.ts'
import { withControlPlane } from './control_plane_session.ts'
import { ORG_CREATE_USAGE } from './usage.ts'

const DOMAIN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/

export interface OrgCreateArgs { name: string, domain: string, plan: Plan }

/** Parses and checks the arguments; anything wrong is a usage error (exit 2). */
export function parseOrgCreateArgs (args: string[]): OrgCreateArgs {
  let values: { name?: string | undefined, domain?: string | undefined, plan?: string | undefined }
  try {
    values = parseArgs({
      args,
      options: { name: { type: 'string' }, domain: { type: 'string' }, plan: { type: 'string' } },
      strict: true,
      allowPositionals: false
    }).values
  } catch (err) {
    throw new CliError(`outbox: ${(err as Error).message}\n${ORG_CREATE_USAGE}`, 2)
  }
  const name = values.name?.trim() ?? ''
  const domain = values.domain?.trim().toLowerCase() ?? ''
  const plan = values.plan ?? 'free'
  if (name === '' || name.length > 200) throw new CliError(`outbox: --name is required (1 to 200 characters)\n${ORG_CREATE_USAGE}`, 2)
  if (domain.length > 253 || !DOMAIN.test(domain)) {
    throw new CliError(`outbox: --domain must be a domain name such as example.com\n${ORG_CREATE_USAGE}`, 2)
  }
  if (!(PLANS as readonly string[]).includes(plan)) {
    throw new CliError(`outbox: --plan must be one of ${PLANS.join(', ')}\n${ORG_CREATE_USAGE}`, 2)
  }
  return { name, domain, plan: plan as Plan }
}

/**
 * `outbox org create`: an organisation with a verified domain and an admin key, against the configured NATS. Recorded
 * as `organization.created` in the new organisation's own audit log, so its admin reads how it began.
 */
export async function runOrgCreate (args: string[], env: Readonly<Record<string, string | undefined>>): Promise<CreatedOrganization> {
  const input = parseOrgCreateArgs(args)
  const config = loadConfig(env)
  return await withControlPlane(env, ORG_CREATE_USAGE, async (cp, audit) => {
    let created: CreatedOrganization
    try {
      created = await createOrganization(cp, config, input)
    } catch (err) {
      if (err instanceof ApiError && err.code === 'conflict') {
        throw new CliError(`outbox: the domain ${input.domain} is already registered to an organisation`)
      }
      throw err
    }
    await audit.cliOnly('org create', {
      org_id: created.organization_id,
      target: null,
      changes: { name: input.name, plan: input.plan, domain: input.domain, domain_id: created.domain_id }
    })
    return created
  })
}
