import { route } from '../http/route.ts'
import { ownedRecord } from '../http/access.ts'
import { FORBIDDEN_OTHER_ORG, errorResponses } from '../schemas/control.ts'
import { DomainHealthView } from '../schemas/domain_health.ts'

export const domainHealthRoutes = [
  route({
    method: 'get',
    path: '/v1/domains/:id/health',
    idPrefix: 'dom',
    permission: 'manage',
    summary: 'Look up the domain\'s DNS now: SPF for every egress source, DKIM, DMARC, return path, CNAMEs, MTA-STS and TLS-RPT, ' +
      'and the sources\' reverse DNS and blocklist listings',
    description: 'Each item is ok, warning, error or not_checked with a message. An answer is reused for a minute; past 10 live ' +
      'checks a minute an organisation gets 429 with Retry-After. See docs/domain-health.md.',
    tag: 'Domains',
    responses: {
      200: { description: 'The domain\'s health', schema: DomainHealthView },
      ...errorResponses({
        forbidden: FORBIDDEN_OTHER_ORG,
        not_found: 'No domain with this id',
        rate_limited: 'Per-key rate limit exceeded, or more than 10 live health checks of the organisation this minute'
      })
    },
    handler: async ({ deps, auth, params }) => {
      const domain = ownedRecord(deps.cp.domains, auth.org.id, params.id!, 'domain')
      return { status: 200, body: await deps.domainHealth.live(domain) }
    }
  })
]
