import type { Config, Plan } from '../../config/mod.ts'
import {
  ApiError, KvConflictError, newId, randomToken, sha256Hex,
  type ApiKeyRecord, type ControlPlane, type OrgRecord, type Permission
} from '../../engine/protocol/mod.ts'
import { buildDomain } from './domains.ts'
import { KEY_PREFIX_LENGTH } from '../auth.ts'

export interface NewKey { record: ApiKeyRecord, value: string }

/** Builds a key and its stored record; the value is returned to the caller once and only its hash is kept. */
export function buildApiKey (input: { orgId: string, domainId: string, name: string, permissions: Permission[], environment: 'live' | 'test', value?: string }): NewKey {
  const value = input.value ?? `ob_${input.environment}_${randomToken(32)}`
  const record: ApiKeyRecord = {
    id: newId('key'),
    org_id: input.orgId,
    domain_id: input.domainId,
    name: input.name,
    permissions: [...new Set(input.permissions)],
    environment: input.environment,
    hash: sha256Hex(value),
    prefix: value.slice(0, KEY_PREFIX_LENGTH),
    last4: value.slice(-4),
    created_at: new Date().toISOString()
  }
  return { record, value }
}

export interface CreatedOrganization { organization_id: string, domain_id: string, api_key: string }

/**
 * An organisation with a verified domain and an admin key: what the CLI, the bootstrap variables and the
 * tests all create. The domain name is claimed first, so a taken name fails before anything is written.
 */
export async function createOrganization (cp: ControlPlane, config: Config, input: { name: string, domain: string, plan: Plan, adminKey?: string }): Promise<CreatedOrganization> {
  const org: OrgRecord = { id: newId('org'), name: input.name, plan: input.plan, created_at: new Date().toISOString() }
  const domain = await buildDomain(config, org.id, input.domain, true)
  try {
    await cp.domainNames.create(domain.name, `${org.id}.${domain.id}`)
  } catch (err) {
    if (err instanceof KvConflictError) throw new ApiError('conflict', `The domain ${domain.name} is already registered.`, { field: 'domain' })
    throw err
  }
  await cp.orgs.put(org.id, org)
  await cp.domains.put(`${org.id}.${domain.id}`, domain)
  const key = buildApiKey({ orgId: org.id, domainId: domain.id, name: 'admin', permissions: ['admin'], environment: 'live', ...(input.adminKey !== undefined ? { value: input.adminKey } : {}) })
  await cp.apiKeys.put(key.record.id, key.record)
  return { organization_id: org.id, domain_id: domain.id, api_key: key.value }
}

/** `OB_BOOTSTRAP_ADMIN_KEY`: create org `default` with it once; later starts find the key and do nothing. */
export async function bootstrap (cp: ControlPlane, config: Config): Promise<CreatedOrganization | undefined> {
  const value = config.bootstrap.adminKey
  if (value === undefined || cp.keyByValue(value) !== undefined) return undefined
  return await createOrganization(cp, config, { name: 'default', domain: config.bootstrap.domain, plan: config.bootstrap.plan, adminKey: value })
}
