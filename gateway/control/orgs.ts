import type { Config, Plan } from '../../config/mod.ts'
import { ApiError, newId, randomToken, sha256Hex, type ApiKeyRecord, type Permission } from '../../protocol/mod.ts'
import { type ControlPlane } from '../../stores/control_plane/mod.ts'
import { buildDomain } from './domains.ts'
import { spfPolicy } from './spf.ts'
import { KEY_PREFIX_LENGTH } from '../auth.ts'
import { takeDomainName } from './domain_claims.ts'

export interface NewKey { record: ApiKeyRecord, value: string }

export interface NewKeyInput {
  orgId: string
  domainId: string
  name: string
  permissions: Permission[]
  environment: 'live' | 'test'
  value?: string
}

/** Builds a key and its stored record; the value is returned to the caller once and only its hash is kept. */
export function buildApiKey (input: NewKeyInput): NewKey {
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
 * tests all create. The domain name is taken first, so a name verified elsewhere fails before anything is written.
 */
export async function createOrganization (
  cp: ControlPlane, config: Config, input: { name: string, domain: string, plan: Plan, adminKey?: string }
): Promise<CreatedOrganization> {
  const orgId = newId('org')
  const domain = await buildDomain(config, orgId, input.domain, true, spfPolicy(config, cp.egress).value)
  // The operator vouches for the name: it is taken unless verified elsewhere, and other pending claims lapse.
  await takeDomainName(cp, domain, 'domain')
  const org = await cp.organizations.create({ id: orgId, name: input.name, plan: input.plan })
  await cp.domains.put(`${org.id}.${domain.id}`, domain)
  const key = buildApiKey({
    orgId: org.id,
    domainId: domain.id,
    name: 'admin',
    permissions: ['admin'],
    environment: 'live',
    ...(input.adminKey !== undefined ? { value: input.adminKey } : {})
  })
  await cp.apiKeys.put(key.record.id, key.record)
  return { organization_id: org.id, domain_id: domain.id, api_key: key.value }
}

/** The organisation `OB_BOOTSTRAP_ADMIN_KEY` creates, and the only one a later bootstrap key may be added to. */
export const BOOTSTRAP_ORG_NAME = 'default'

/** What a start with `OB_BOOTSTRAP_ADMIN_KEY` did; `skipped` is worth one warning, never a refusal to start. */
export type BootstrapOutcome =
  | { kind: 'unset' | 'present' }
  | { kind: 'created', organization_id: string, domain_id: string }
  | { kind: 'key_added', organization_id: string, domain_id: string, key_id: string }
  | { kind: 'skipped', domain: string, owner: string, reason: string }

/**
 * `OB_BOOTSTRAP_ADMIN_KEY`: creates org `default` with its domain and this admin key on the first start; later
 * starts find the key and do nothing. A new key whose domain already exists is added to the organisation that
 * owns the domain when that is org `default` (the key was changed between starts); a domain held by any other
 * organisation is left alone and the start goes on without the key.
 */
export async function bootstrap (cp: ControlPlane, config: Config): Promise<BootstrapOutcome> {
  const value = config.bootstrap.adminKey
  if (value === undefined) return { kind: 'unset' }
  if (cp.keyByValue(value) !== undefined) return { kind: 'present' }
  const name = config.bootstrap.domain.toLowerCase()
  if (cp.domainOwner(name) === undefined) {
    try {
      const created = await createOrganization(cp, config, {
        name: BOOTSTRAP_ORG_NAME, domain: name, plan: config.bootstrap.plan, adminKey: value
      })
      return { kind: 'created', organization_id: created.organization_id, domain_id: created.domain_id }
    } catch (err) {
      // another process claimed the name between the look-up and the claim: treat it as already there
      if (!(err instanceof ApiError && err.code === 'conflict')) throw err
    }
  }
  return await addBootstrapKey(cp, name, value)
}

async function addBootstrapKey (cp: ControlPlane, name: string, value: string): Promise<BootstrapOutcome> {
  const owner = cp.domainOwner(name)
  const org = owner === undefined ? undefined : cp.orgs.get(owner.org_id)
  if (owner === undefined || org === undefined) {
    return {
      kind: 'skipped',
      domain: name,
      owner: owner?.org_id ?? '',
      reason: 'the domain is being verified by another claim, or its organisation is missing'
    }
  }
  const { org_id: orgId, id: domainId } = owner
  if (org.name !== BOOTSTRAP_ORG_NAME) {
    return {
      kind: 'skipped', domain: name, owner: orgId, reason: `the domain belongs to organisation ${orgId}, not to org ${BOOTSTRAP_ORG_NAME}`
    }
  }
  const key = buildApiKey({ orgId, domainId, name: 'admin (bootstrap)', permissions: ['admin'], environment: 'live', value })
  await cp.apiKeys.put(key.record.id, key.record)
  return { kind: 'key_added', organization_id: orgId, domain_id: domainId, key_id: key.record.id }
}
