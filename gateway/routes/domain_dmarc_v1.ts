import { Type, type TInteger } from 'typebox'
import { ApiError, dmarcReportAddress } from '../../protocol/mod.ts'
import { DmarcSummaries, utcDay } from '../../stores/dmarc/mod.ts'
import { route } from '../http/route.ts'
import { ownedRecord } from '../http/access.ts'
import { fromStore } from '../http/read_model.ts'
import { FORBIDDEN_OTHER_ORG, errorResponses } from '../schemas/control.ts'

const DAY_MS = 86_400_000
/** Days shown when no range is asked for: the last 7, today included. */
const DEFAULT_DAYS = 7
/** The longest range one request reads (one Redis hash per day). */
export const DMARC_MAX_DAYS = 31

const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A UTC day, YYYY-MM-DD' })
const DmarcQuery = Type.Object({
  from: Type.Optional(Day),
  to: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A UTC day, YYYY-MM-DD, included; default today' }))
})

const n = (description: string): TInteger => Type.Integer({ minimum: 0, description })
const Source = Type.Object({
  ip: Type.String({ description: 'The sending address the receivers saw (row source_ip)' }),
  messages: n('Messages from it'),
  dmarc_pass: n('Of them, messages that passed DMARC (aligned SPF or aligned DKIM)')
})
const DmarcDayView = Type.Object({
  date: Type.String({ description: 'The UTC day the reports\' date ranges begin on, YYYY-MM-DD' }),
  reports: n('Reports received about the day'),
  reporters: Type.Array(Type.Object({ name: Type.String({ description: 'org_name of the report' }), reports: n('Its reports') }), {
    description: 'Who reported, most reports first (the 50 first reporters of a day by name, the rest as `other`)'
  }),
  messages: n('Messages the reports count'),
  spf: Type.Object({ pass: n('Messages whose SPF check passed'), aligned: n('Messages whose SPF passed and aligned with From') }),
  dkim: Type.Object({
    pass: n('Messages with at least one DKIM signature that verified'), aligned: n('Messages whose DKIM passed and aligned with From')
  }),
  dmarc: Type.Object({ pass: n('Messages that passed DMARC (aligned SPF or aligned DKIM)'), fail: n('Messages that did not') }),
  disposition: Type.Object({
    none: n('Messages delivered with no action'), quarantine: n('Messages sent to spam'), reject: n('Messages refused')
  }, { description: 'What the receivers did with the messages (policy_evaluated disposition)' }),
  sources: Type.Array(Source, { description: 'Sending addresses, most messages first (at most 200 a day)' }),
  other_sources: Type.Optional(Type.Object({ messages: n('Messages'), dmarc_pass: n('Of them, DMARC passes') }, {
    description: 'The sources past the 200 kept for the day, added up'
  }))
})
const DmarcSummaryView = Type.Object({
  domain_id: Type.String(),
  domain: Type.String(),
  rua: Type.String({ description: 'The address to name in the DMARC record\'s rua=, mailto: included' }),
  from: Type.String({ description: 'First day of the range, YYYY-MM-DD' }),
  to: Type.String({ description: 'Last day of the range, YYYY-MM-DD, included' }),
  days: Type.Array(DmarcDayView, { description: 'The days of the range that have reports, oldest first' })
})

function dayParam (query: URLSearchParams, field: 'from' | 'to'): number | undefined {
  const raw = query.get(field)
  if (raw === null) return undefined
  const ms = Date.parse(`${raw}T00:00:00Z`)
  if (!Number.isFinite(ms) || utcDay(ms) !== raw) throw ApiError.validation([{ field, message: 'must be a day, YYYY-MM-DD' }])
  return ms
}

export const domainDmarcRoutes = [
  route({
    method: 'get',
    path: '/v1/domains/:id/dmarc',
    idPrefix: 'dom',
    permission: 'manage',
    summary: 'The DMARC aggregate reports received about the domain, summarised per UTC day',
    description: 'Reports are mailed by receivers (Google, Microsoft, Yahoo, …) to the rua address of the domain\'s DMARC record, ' +
      '`dmarc@bounces.<domain>`, and summarised as they arrive: per day, the sending sources, the messages, SPF and DKIM ' +
      `results and alignment, and what the receivers did. Default range: the last ${DEFAULT_DAYS} days; at most ${DMARC_MAX_DAYS}.`,
    tag: 'Domains',
    query: DmarcQuery,
    responses: {
      200: { description: 'The days of the range that have reports', schema: DmarcSummaryView },
      ...errorResponses({
        validation_error: '`from` or `to` not a day, `from` after `to`, or a range over 31 days',
        forbidden: FORBIDDEN_OTHER_ORG,
        not_found: 'No domain with this id',
        service_unavailable: 'The summaries\' store is unavailable'
      })
    },
    handler: async ({ deps, auth, params, query }) => {
      const domain = ownedRecord(deps.cp.domains, auth.org.id, params.id!, 'domain')
      const toMs = dayParam(query, 'to') ?? Date.parse(`${utcDay(Date.now())}T00:00:00Z`)
      const fromMs = dayParam(query, 'from') ?? toMs - (DEFAULT_DAYS - 1) * DAY_MS
      if (fromMs > toMs) throw ApiError.validation([{ field: 'from', message: 'must not be after to' }])
      if (toMs - fromMs >= DMARC_MAX_DAYS * DAY_MS) {
        throw ApiError.validation([{ field: 'from', message: `the range from..to may not exceed ${DMARC_MAX_DAYS} days` }])
      }
      const days = await fromStore(new DmarcSummaries(deps.redis).days(domain.id, utcDay(fromMs), utcDay(toMs)))
      return {
        status: 200,
        body: {
          domain_id: domain.id,
          domain: domain.name,
          rua: `mailto:${dmarcReportAddress(domain.name)}`,
          from: utcDay(fromMs),
          to: utcDay(toMs),
          days: days.map((d) => ({
            date: d.date,
            reports: d.reports,
            reporters: d.reporters,
            messages: d.counts.messages,
            spf: { pass: d.counts.spf_pass, aligned: d.counts.spf_aligned },
            dkim: { pass: d.counts.dkim_pass, aligned: d.counts.dkim_aligned },
            dmarc: { pass: d.counts.dmarc_pass, fail: Math.max(0, d.counts.messages - d.counts.dmarc_pass) },
            disposition: { none: d.counts.none, quarantine: d.counts.quarantine, reject: d.counts.reject },
            sources: d.sources,
            ...(d.other_sources !== undefined ? { other_sources: d.other_sources } : {})
          }))
        }
      }
    }
  })
]
