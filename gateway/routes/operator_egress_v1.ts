import { Type } from 'typebox'
import {
  ApiError, EGRESS_NAME_PATTERN, IMPLICIT_DEFAULT_POOL, STREAM_ID_PATTERN, egressPoolOf, type EgressPoolRecord, type SourceInput
} from '../../protocol/mod.ts'
import { operatorRoute } from '../http/route.ts'
import { operatorErrorResponses } from '../schemas/control.ts'
import {
  CreatePoolBody, CreateSourceBody, DomainAssignmentView, OrgAssignmentView, PatchSourceBody, PoolAssignmentBody, PoolView,
  PutPoolBody, RemovedSource, SourceView, StreamAssignmentView
} from '../schemas/egress.ts'

/**
 * The operator's egress API: sources (local addresses and their EHLO names), pools of them, and which pool an
 * organisation, one of its domains or one of its broadcast streams sends from (limit overrides:
 * operator_egress_limits_v1.ts). Only operator keys reach it. Every write goes through `cp.egress`
 * (stores/control_plane/egress_config.ts), which the CLI calls too.
 */

const TAG = 'Operator'
const NAME = { name: EGRESS_NAME_PATTERN }
const NO_SOURCE = 'No source with this name (or a name of another shape)'
const NO_POOL = 'No pool with this name (or a name of another shape)'

const list = <T>(data: T[]): { data: T[] } => ({ data })
const listOf = <T extends ReturnType<typeof Type.Object>>(item: T) => Type.Object({ data: Type.Array(item) })

function poolView (p: EgressPoolRecord): Record<string, unknown> {
  return p === IMPLICIT_DEFAULT_POOL ? { name: p.name, sources: p.sources, implicit: true } : { ...p, implicit: false }
}

export const operatorEgressRoutes = [
  operatorRoute({
    method: 'get',
    path: '/v1/operator/egress/sources',
    permission: 'operator',
    summary: 'List the egress sources (local addresses with their EHLO names), by name',
    tag: TAG,
    responses: { 200: { description: 'Every source', schema: listOf(SourceView) }, ...operatorErrorResponses({}) },
    handler: ({ deps }) => ({ status: 200, body: list(deps.cp.egress.sources()) })
  }),
  operatorRoute<SourceInput & { name: string }>({
    method: 'post',
    path: '/v1/operator/egress/sources',
    audit: { action: 'egress.source_created', fields: ['address', 'ehlo', 'warmup'], target: ({ body }) => body.name },
    permission: 'operator',
    summary: 'Add a source: an address this host owns and the host name its reverse DNS gives',
    description: 'A `warmup` object starts a warm-up at `started_at` (default now), by `steps` or the built-in curve.',
    tag: TAG,
    body: CreateSourceBody,
    responses: {
      201: { description: 'The source', schema: SourceView },
      ...operatorErrorResponses({
        validation_error: 'Name not [a-z0-9][a-z0-9-]{0,31}, address not an IPv4/IPv6 literal, ehlo not a host name, bad warm-up steps',
        conflict: 'A source with this name exists'
      })
    },
    handler: async (ctx) => {
      const source = await ctx.deps.cp.egress.addSource(ctx.body)
      return { status: 201, body: source }
    }
  }),
  operatorRoute({
    method: 'get',
    path: '/v1/operator/egress/sources/:name',
    paramPatterns: NAME,
    permission: 'operator',
    summary: 'Read one source',
    tag: TAG,
    responses: { 200: { description: 'The source', schema: SourceView }, ...operatorErrorResponses({ not_found: NO_SOURCE }) },
    handler: ({ deps, params }) => {
      const s = deps.cp.egress.source(params.name!)
      if (s === undefined) throw new ApiError('not_found', `No source named ${params.name!}.`)
      return { status: 200, body: s }
    }
  }),
  operatorRoute<SourceInput>({
    method: 'patch',
    path: '/v1/operator/egress/sources/:name',
    audit: { action: 'egress.source_updated', fields: ['address', 'ehlo', 'warmup'] },
    paramPatterns: NAME,
    permission: 'operator',
    summary: 'Change a source\'s address, EHLO name or warm-up (`warmup: null` ends it)',
    tag: TAG,
    body: PatchSourceBody,
    responses: {
      200: { description: 'The source after the change', schema: SourceView },
      ...operatorErrorResponses({ validation_error: 'Empty body, bad address, host name or warm-up', not_found: NO_SOURCE })
    },
    handler: async (ctx) => {
      const source = await ctx.deps.cp.egress.changeSource(ctx.params.name!, ctx.body)
      return { status: 200, body: source }
    }
  }),
  operatorRoute({
    method: 'del',
    path: '/v1/operator/egress/sources/:name',
    audit: { action: 'egress.source_deleted' },
    paramPatterns: NAME,
    permission: 'operator',
    summary: 'Delete a source, taking it out of every pool first',
    description: 'Mail of those pools leaves over their other sources from its next attempt. A source that is the last of a pool ' +
      'is refused (409 `egress_source_in_use`): change or delete the pool first.',
    tag: TAG,
    responses: {
      200: { description: 'Deleted; the pools it was taken out of', schema: RemovedSource },
      ...operatorErrorResponses({ not_found: NO_SOURCE, egress_source_in_use: 'The source is the last one of a pool (`details.pools`)' })
    },
    handler: async (ctx) => {
      const removed = await ctx.deps.cp.egress.removeSource(ctx.params.name!)
      return { status: 200, body: removed }
    }
  }),
  operatorRoute({
    method: 'get',
    path: '/v1/operator/egress/pools',
    permission: 'operator',
    summary: 'List the pools, default included, by name',
    tag: TAG,
    responses: { 200: { description: 'Every pool', schema: listOf(PoolView) }, ...operatorErrorResponses({}) },
    handler: ({ deps }) => ({
      status: 200, body: list(deps.cp.egress.pools().map((p) => poolView(p)))
    })
  }),
  operatorRoute<{ name: string, sources: Array<{ source: string, weight?: number }> }>({
    method: 'post',
    path: '/v1/operator/egress/pools',
    audit: { action: 'egress.pool_set', fields: ['sources'], target: ({ body }) => body.name },
    permission: 'operator',
    summary: 'Create a pool of sources with weights (1 to 100, default 100)',
    tag: TAG,
    body: CreatePoolBody,
    responses: {
      201: { description: 'The pool', schema: PoolView },
      ...operatorErrorResponses({
        validation_error: 'Bad name, no sources, a source named twice, weight outside 1..100',
        conflict: 'A pool with this name exists (default always does: PUT it)',
        unprocessable: 'A source it names does not exist (`details.unknown_sources`)'
      })
    },
    handler: async (ctx) => {
      const { deps, body } = ctx
      if (deps.cp.egress.pool(body.name) !== undefined) {
        throw new ApiError('conflict', `A pool named ${body.name} exists already; PUT /v1/operator/egress/pools/${body.name} replaces it.`)
      }
      const pool = await deps.cp.egress.putPool(body.name, body.sources)
      return { status: 201, body: poolView(pool) }
    }
  }),
  operatorRoute({
    method: 'get',
    path: '/v1/operator/egress/pools/:name',
    paramPatterns: NAME,
    permission: 'operator',
    summary: 'Read one pool (default always exists)',
    tag: TAG,
    responses: { 200: { description: 'The pool', schema: PoolView }, ...operatorErrorResponses({ not_found: NO_POOL }) },
    handler: ({ deps, params }) => {
      const p = deps.cp.egress.pool(params.name!)
      if (p === undefined) throw new ApiError('not_found', `No pool named ${params.name!}.`)
      return { status: 200, body: poolView(p) }
    }
  }),
  operatorRoute<{ sources: Array<{ source: string, weight?: number }> }>({
    method: 'put',
    path: '/v1/operator/egress/pools/:name',
    audit: { action: 'egress.pool_set', fields: ['sources'] },
    paramPatterns: NAME,
    permission: 'operator',
    summary: 'Create or replace a pool\'s sources (idempotent); applies to mail from its next attempt',
    tag: TAG,
    body: PutPoolBody,
    responses: {
      200: { description: 'The pool', schema: PoolView },
      ...operatorErrorResponses({
        validation_error: 'No sources (allowed only for default), a source named twice, weight outside 1..100',
        unprocessable: 'A source it names does not exist (`details.unknown_sources`)'
      })
    },
    handler: async (ctx) => {
      const pool = await ctx.deps.cp.egress.putPool(ctx.params.name!, ctx.body.sources)
      return { status: 200, body: poolView(pool) }
    }
  }),
  operatorRoute({
    method: 'del',
    path: '/v1/operator/egress/pools/:name',
    audit: { action: 'egress.pool_deleted' },
    paramPatterns: NAME,
    permission: 'operator',
    summary: 'Delete a pool nobody is assigned to; deleting default forgets its sources (the host\'s own address again)',
    tag: TAG,
    responses: {
      204: { description: 'Deleted' },
      ...operatorErrorResponses({
        not_found: NO_POOL,
        egress_pool_in_use: 'Organisations, domains or streams are assigned to it (`details` names up to 20 of each, with the counts)'
      })
    },
    handler: async (ctx) => {
      await ctx.deps.cp.egress.removePool(ctx.params.name!)
      return { status: 204 }
    }
  }),
  operatorRoute<{ pool: string | null }>({
    method: 'put',
    path: '/v1/operator/organizations/:id/egress-pool',
    audit: { action: 'organization.egress_pool_set', fields: ['pool'] },
    idPrefix: 'org',
    permission: 'operator',
    summary: 'Assign the pool an organisation\'s mail leaves from (null: default)',
    tag: TAG,
    body: PoolAssignmentBody,
    responses: {
      200: { description: 'The assignment', schema: OrgAssignmentView },
      ...operatorErrorResponses({
        validation_error: 'pool not a name or null', not_found: 'No such organisation', unprocessable: 'No such pool'
      })
    },
    handler: async (ctx) => {
      const { deps, params, body } = ctx
      const org = await deps.cp.egress.assignOrg(params.id!, body.pool)
      return { status: 200, body: { organization_id: org.id, egress_pool: org.egress_pool ?? 'default' } }
    }
  }),
  operatorRoute<{ pool: string | null }>({
    method: 'put',
    path: '/v1/operator/organizations/:id/domains/:domain_id/egress-pool',
    audit: { action: 'domain.egress_pool_set', fields: ['pool'] },
    idPrefix: 'org',
    paramPatterns: { domain_id: '^dom_[0-9a-z]{26}$' },
    permission: 'operator',
    summary: 'Assign a domain its own pool over its organisation\'s (null: its organisation\'s applies)',
    tag: TAG,
    body: PoolAssignmentBody,
    responses: {
      200: { description: 'The assignment', schema: DomainAssignmentView },
      ...operatorErrorResponses({
        validation_error: 'pool not a name or null',
        not_found: 'No such organisation, or the domain is not one of its domains',
        unprocessable: 'No such pool'
      })
    },
    handler: async (ctx) => {
      const { deps, params, body } = ctx
      const domain = await deps.cp.egress.assignDomain(params.id!, params.domain_id!, body.pool)
      const org = deps.cp.orgs.get(params.id!)!
      return {
        status: 200,
        body: {
          organization_id: org.id,
          domain_id: domain.id,
          egress_pool: domain.egress_pool ?? null,
          effective_pool: egressPoolOf(org, domain)
        }
      }
    }
  }),
  operatorRoute<{ pool: string | null }>({
    method: 'put',
    path: '/v1/operator/organizations/:id/streams/:stream/egress-pool',
    audit: { action: 'stream.egress_pool_set', fields: ['pool'], target: ({ params }) => params.stream },
    idPrefix: 'org',
    paramPatterns: { stream: STREAM_ID_PATTERN },
    permission: 'operator',
    summary: 'Assign a broadcast stream its own pool over its domains\' and organisation\'s (null: theirs apply)',
    description: 'Mail on the stream leaves from this pool from its next attempt, mail queued before included; the stream\'s ' +
      'deletion removes the assignment. The organisation\'s own keys cannot set it.',
    tag: TAG,
    body: PoolAssignmentBody,
    responses: {
      200: { description: 'The assignment', schema: StreamAssignmentView },
      ...operatorErrorResponses({
        validation_error: 'pool not a name or null',
        not_found: 'No such organisation, or the stream is not one of its broadcast streams',
        unprocessable: 'No such pool, or the stream is transactional (assign the organisation or domain instead)'
      })
    },
    handler: async (ctx) => {
      const { deps, params, body } = ctx
      const stream = await deps.cp.egress.assignStream(params.id!, params.stream!, body.pool)
      return { status: 200, body: { organization_id: stream.org_id, stream: stream.id, egress_pool: stream.egress_pool ?? null } }
    }
  })
]
