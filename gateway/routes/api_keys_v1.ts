import { Type } from 'typebox'
import { ApiError, STREAM_ID_PATTERN, type Permission } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { ownedRecord } from '../http/access.ts'
import { PageQuery, pageById, pageSchema } from '../http/pagination.ts'
import { buildApiKey } from '../control/orgs.ts'
import { MAX_GRACE_MINUTES, assertMayGrant, assertMayIssue, keyView, orgKeys, ownedKey, revokeKey, rotateKey } from '../control/api_keys.ts'
import {
  ApiKeyView, CreatedApiKey, Environment, FORBIDDEN_OTHER_ORG, Permission as PermissionSchema, RotatedApiKey, errorResponses
} from '../schemas/control.ts'

const CreateKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  domain_id: Type.String({ minLength: 1, maxLength: 64, description: 'A domain of the caller\'s organisation' }),
  permissions: Type.Array(PermissionSchema, { minItems: 1, maxItems: 4 }),
  environment: Type.Optional(Environment),
  default_stream: Type.Optional(Type.String({
    pattern: STREAM_ID_PATTERN,
    errorMessage: 'must be a stream id: 1 to 40 lower-case letters, digits and dashes',
    description: 'The message stream of this key\'s sends that name none (HTTP `stream`, SMTP `X-Outbox-Stream`); default `transactional`'
  }))
}, { additionalProperties: false })

interface CreateKey {
  name: string, domain_id: string, permissions: Permission[], environment?: 'live' | 'test', default_stream?: string
}

const RotateBody = Type.Object({
  grace_period_minutes: Type.Integer({
    minimum: 0, maximum: MAX_GRACE_MINUTES, description: 'Minutes the old key keeps working; 0 revokes it now'
  })
}, { additionalProperties: false })

const TAG = 'API keys'

export const apiKeyRoutes = [
  route<CreateKey>({
    method: 'post',
    path: '/v1/api-keys',
    audit: {
      action: 'api_key.created',
      fields: ['name', 'domain_id', 'permissions', 'default_stream'],
      detail: ({ reply }) => ({ environment: reply.environment })
    },
    permission: 'manage',
    summary: 'Create an API key; the value is returned only in this response',
    tag: TAG,
    body: CreateKeyBody,
    responses: {
      201: { description: 'The key, with its full value', schema: CreatedApiKey },
      ...errorResponses({
        validation_error: 'Invalid or missing fields',
        forbidden: 'The key lacks manage, grants a permission it does not hold, is a sandbox (ob_test_) key asking for a live key, ' +
          'or the domain belongs to another organisation',
        not_found: 'No domain with that domain_id',
        stream_not_found: 'No message stream default_stream in the organisation'
      })
    },
    handler: async (ctx) => {
      const { deps, auth, body } = ctx
      assertMayGrant(auth.key, body.permissions, 'create')
      assertMayIssue(auth.key, body.environment ?? 'live', 'create')
      const domain = ownedRecord(deps.cp.domains, auth.org.id, body.domain_id, 'domain')
      const stream = body.default_stream
      if (stream !== undefined && !deps.cp.streams.exists(auth.org.id, stream)) {
        throw new ApiError('stream_not_found', `The organisation has no message stream ${stream}.`, { field: 'default_stream' })
      }
      const k = buildApiKey({
        orgId: auth.org.id, domainId: domain.id, name: body.name, permissions: body.permissions, environment: body.environment ?? 'live'
      })
      if (stream !== undefined) k.record.default_stream = stream
      await deps.cp.apiKeys.put(k.record.id, k.record)
      const r = k.record
      return {
        status: 201,
        body: {
          id: r.id,
          name: r.name,
          domain_id: r.domain_id,
          permissions: r.permissions,
          environment: r.environment,
          key: k.value,
          prefix: r.prefix,
          created_at: r.created_at,
          ...(r.default_stream !== undefined ? { default_stream: r.default_stream } : {})
        }
      }
    }
  }),
  route({
    method: 'get',
    path: '/v1/api-keys',
    permission: 'manage',
    summary: 'List the organisation\'s API keys (never their values), oldest first',
    tag: TAG,
    query: PageQuery,
    responses: {
      200: { description: 'A page of keys', schema: pageSchema(ApiKeyView) },
      ...errorResponses({ validation_error: 'Bad limit or cursor', forbidden: 'The key lacks manage' })
    },
    handler: ({ deps, auth, query }) => {
      return { status: 200, body: pageById(orgKeys(deps.cp, auth.org.id), query, deps.config.api.listMaxBytes, keyView) }
    }
  }),
  route({
    method: 'get',
    path: '/v1/api-keys/:id',
    idPrefix: 'key',
    permission: 'manage',
    summary: 'Read one API key (never its value)',
    tag: TAG,
    responses: {
      200: { description: 'The key', schema: ApiKeyView },
      ...errorResponses({ forbidden: FORBIDDEN_OTHER_ORG, not_found: 'No key with this id' })
    },
    handler: ({ deps, auth, params }) => ({ status: 200, body: keyView(ownedKey(deps.cp, auth.org.id, params.id!)) })
  }),
  route({
    method: 'del',
    path: '/v1/api-keys/:id',
    audit: { action: 'api_key.revoked' },
    idPrefix: 'key',
    permission: 'manage',
    summary: 'Revoke an API key; it is refused (401) from then on',
    tag: TAG,
    responses: {
      204: { description: 'Revoked (also when it already was)' },
      ...errorResponses({
        forbidden: `${FORBIDDEN_OTHER_ORG}, or the target key holds a permission the caller lacks`, not_found: 'No key with this id'
      })
    },
    handler: async (ctx) => {
      const { deps, auth, params } = ctx
      const key = ownedKey(deps.cp, auth.org.id, params.id!)
      assertMayGrant(auth.key, key.permissions, 'revoke')
      await revokeKey(deps.cp, key)
      return { status: 204 }
    }
  }),
  route<{ grace_period_minutes: number }>({
    method: 'post',
    path: '/v1/api-keys/:id/rotate',
    audit: {
      action: 'api_key.rotated',
      fields: ['grace_period_minutes'],
      detail: ({ reply }) => ({ new_api_key_id: reply.id, old_key_expires_at: reply.old_key_expires_at })
    },
    idPrefix: 'key',
    permission: 'manage',
    summary: 'Rotate an API key: issue a new value; the old one works for the grace period',
    tag: TAG,
    body: RotateBody,
    responses: {
      201: { description: 'The new key, with its full value', schema: RotatedApiKey },
      ...errorResponses({
        validation_error: 'grace_period_minutes missing or outside 0..10080',
        forbidden: `${FORBIDDEN_OTHER_ORG}, the key holds a permission the caller lacks, ` +
          'or the caller is a sandbox (ob_test_) key and the key is live',
        not_found: 'No key with this id',
        conflict: 'The key is revoked, expired or was already rotated'
      })
    },
    handler: async (ctx) => {
      const { deps, auth, params, body } = ctx
      const old = ownedKey(deps.cp, auth.org.id, params.id!)
      assertMayGrant(auth.key, old.permissions, 'rotate')
      assertMayIssue(auth.key, old.environment, 'rotate into')
      const r = await rotateKey(deps.cp, old, body.grace_period_minutes)
      return { status: 201, body: { id: r.created.id, key: r.value, replaces: old.id, old_key_expires_at: r.oldExpiresAt } }
    }
  })
]
