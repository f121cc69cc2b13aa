import { Type } from 'typebox'
import { route } from '../http/route.ts'
import { ownedRecord } from '../http/access.ts'
import { PageQuery, pageById, pageSchema, withinBytes } from '../http/pagination.ts'
import { addDomain, domainView, removeDomain } from '../control/domain_admin.ts'
import { verifyDomain } from '../control/domain_verify.ts'
import { setDomainHosts, type DomainHostsInput } from '../control/domain_hosts.ts'
import { ensureEd25519, startRotation } from '../control/dkim_keys.ts'
import { DomainView, FORBIDDEN_OTHER_ORG, VerifiedDomainView, errorResponses } from '../schemas/control.ts'

const CreateDomainBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 253, description: 'The domain to send from, e.g. mail.example.com' })
}, { additionalProperties: false })

const HostName = Type.String({ minLength: 1, maxLength: 253 })
const PatchDomainBody = Type.Object({
  return_path_host: Type.Optional(Type.Union([HostName, Type.Null()], {
    description: 'A host name under the domain (rp.example.com) for the envelope sender, instead of bounces.<domain>; null: the default'
  })),
  tracking_host: Type.Optional(Type.Union([HostName, Type.Null()], {
    description: 'A host name under the domain (links.example.com) for open, click and unsubscribe links, instead of the host of ' +
      'OB_PUBLIC_URL; null: the default'
  }))
}, { additionalProperties: false, minProperties: 1 })

const TAG = 'Domains'

/** The DKIM selectors of a domain's answer: public names, never a key. */
function selectors (keys: ReadonlyArray<{ selector: string }>): string[] {
  return keys.map((k) => k.selector)
}
const NOT_FOUND = 'No domain with this id'

export const domainRoutes = [
  route<{ name: string }>({
    method: 'post',
    path: '/v1/domains',
    audit: { action: 'domain.created', fields: ['name'] },
    permission: 'manage',
    summary: 'Claim a sending domain; publish the returned DNS records, then verify it (the first claim to verify owns the name)',
    tag: TAG,
    body: CreateDomainBody,
    responses: {
      201: { description: 'The domain, pending, with the DNS records to publish', schema: DomainView },
      ...errorResponses({
        validation_error: 'name is missing or not a domain name',
        forbidden: 'The key lacks manage',
        conflict: 'The name is already verified (by this or another organisation), or this organisation already has a claim on it'
      })
    },
    handler: async ({ deps, auth, body }) => ({
      status: 201, body: domainView(deps.cp, deps.config, await addDomain(deps.cp, deps.config, auth.org.id, body.name))
    })
  }),
  route({
    method: 'get',
    path: '/v1/domains',
    permission: 'manage',
    summary: 'List the organisation\'s domains, oldest first',
    tag: TAG,
    query: PageQuery,
    responses: {
      200: { description: 'A page of domains', schema: pageSchema(DomainView) },
      ...errorResponses({ validation_error: 'Bad limit or cursor', forbidden: 'The key lacks manage' })
    },
    handler: async ({ deps, auth, query }) => {
      const page = pageById(deps.cp.domains.list(`${auth.org.id}.`), query, deps.config.api.listMaxBytes)
      const data = await Promise.all(page.data.map(async (d) => domainView(deps.cp, deps.config, await ensureEd25519(deps.cp, d))))
      const cursorOf = (d: Record<string, unknown>): string => Buffer.from(String(d.id)).toString('base64url')
      return { status: 200, body: withinBytes({ ...page, data }, deps.config.api.listMaxBytes, cursorOf) }
    }
  }),
  route({
    method: 'get',
    path: '/v1/domains/:id',
    idPrefix: 'dom',
    permission: 'manage',
    summary: 'Read one domain',
    tag: TAG,
    responses: {
      200: { description: 'The domain', schema: DomainView },
      ...errorResponses({ forbidden: FORBIDDEN_OTHER_ORG, not_found: NOT_FOUND })
    },
    handler: async ({ deps, auth, params }) => {
      const domain = await ensureEd25519(deps.cp, ownedRecord(deps.cp.domains, auth.org.id, params.id!, 'domain'))
      return { status: 200, body: domainView(deps.cp, deps.config, domain) }
    }
  }),
  route<DomainHostsInput>({
    method: 'patch',
    path: '/v1/domains/:id',
    audit: { action: 'domain.hosts_set', fields: ['return_path_host', 'tracking_host'] },
    idPrefix: 'dom',
    permission: 'manage',
    summary: 'Choose the domain\'s own return-path and tracking hosts (subdomains of it); each is used once a verification finds ' +
      'its records',
    description: 'A new host is listed with its DNS records (SPF and MX at the return-path host, a CNAME to the installation at ' +
      'the tracking host) and is not used until `POST /v1/domains/{id}/verify` finds them; the default stays in use until then. ' +
      'See docs/domains.md.',
    tag: TAG,
    body: PatchDomainBody,
    responses: {
      200: { description: 'The domain with its hosts and their records', schema: DomainView },
      ...errorResponses({
        validation_error: 'A host is not a host name under the domain, is bounces.<domain>, or is the domain\'s other host',
        forbidden: FORBIDDEN_OTHER_ORG,
        not_found: NOT_FOUND,
        conflict: 'The host is in a domain another organisation verified'
      })
    },
    handler: async ({ deps, auth, params, body }) => {
      const domain = ownedRecord(deps.cp.domains, auth.org.id, params.id!, 'domain')
      return { status: 200, body: domainView(deps.cp, deps.config, await setDomainHosts(deps.cp, domain, body)) }
    }
  }),
  route({
    method: 'del',
    path: '/v1/domains/:id',
    audit: { action: 'domain.deleted' },
    idPrefix: 'dom',
    permission: 'manage',
    summary: 'Delete a domain and free its name',
    tag: TAG,
    responses: {
      204: { description: 'Deleted' },
      ...errorResponses({ forbidden: FORBIDDEN_OTHER_ORG, not_found: NOT_FOUND, conflict: 'Live API keys are still bound to the domain' })
    },
    handler: async ({ deps, auth, params }) => {
      await removeDomain(deps.cp, ownedRecord(deps.cp.domains, auth.org.id, params.id!, 'domain'))
      return { status: 204 }
    }
  }),
  route({
    method: 'post',
    path: '/v1/domains/:id/verify',
    audit: {
      action: 'domain.verification_checked',
      detail: ({ reply }) => ({ status: reply.status, dkim_signing: selectors(reply.dkim.signing) })
    },
    idPrefix: 'dom',
    permission: 'manage',
    summary: 'Check the domain\'s DNS records (or, with OB_DOMAIN_VERIFICATION=off, mark it verified)',
    tag: TAG,
    responses: {
      200: {
        description: 'The domain with the status of each DNS record; verified once DKIM and the SPF records of the domain and its ' +
          'return-path domain are found',
        schema: VerifiedDomainView
      },
      ...errorResponses({
        forbidden: FORBIDDEN_OTHER_ORG,
        not_found: NOT_FOUND,
        conflict: 'This claim has lapsed: another organisation verified the name first (error.details.status is lapsed)',
        service_unavailable: 'The DNS servers did not answer'
      })
    },
    handler: async ({ deps, auth, params }) => {
      const claimed = ownedRecord(deps.cp.domains, auth.org.id, params.id!, 'domain')
      const { domain, records } = await verifyDomain(deps.cp, deps.config, claimed)
      return { status: 200, body: { ...domainView(deps.cp, deps.config, domain), records } }
    }
  }),
  route({
    method: 'post',
    path: '/v1/domains/:id/dkim/rotate',
    audit: { action: 'domain.dkim_rotated', detail: ({ reply }) => ({ dkim_pending: selectors(reply.dkim.pending) }) },
    idPrefix: 'dom',
    permission: 'manage',
    summary: 'Add a new DKIM key pair (RSA-2048 and ed25519, each under a new selector); it signs from the verification that finds ' +
      'both its TXT records, and the replaced keys\' records stay listed for 7 days',
    tag: TAG,
    responses: {
      200: {
        description: 'The domain with the new pair\'s records listed and its selectors in dkim.pending; the current keys keep signing ' +
          'until then',
        schema: DomainView
      },
      ...errorResponses({
        forbidden: FORBIDDEN_OTHER_ORG,
        not_found: NOT_FOUND,
        conflict: 'A rotation is already waiting for its DNS records (error.details.selectors)'
      })
    },
    handler: async ({ deps, auth, params }) => {
      const domain = await ensureEd25519(deps.cp, ownedRecord(deps.cp.domains, auth.org.id, params.id!, 'domain'))
      return { status: 200, body: domainView(deps.cp, deps.config, await startRotation(deps.cp, domain)) }
    }
  })
]
