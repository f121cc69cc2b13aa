import { Type } from 'typebox'
import { PageQuery } from '../http/pagination.ts'

/** One audit log entry (stores/audit), as GET /v1/audit-log shows it. */
export const AuditEntryView = Type.Object({
  id: Type.String({ description: '`aud_…`' }),
  org_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The organisation the change concerns; null for an operator change of the whole installation'
  }),
  actor: Type.Object({
    type: Type.Enum(['api_key', 'operator'], { description: 'An API key of the organisation, or an operator key' }),
    id: Type.String({
      description: 'The key id (`key_…` or `opk_…`); never the key itself. Through the command line `cli:<local user name>`'
    }),
    via: Type.Optional(Type.Enum(['cli'], { description: 'Set when the operator made the change through the command line (`outbox …`)' }))
  }),
  address: Type.String({ description: 'The client address of the request; the host name for a change made through the command line' }),
  at: Type.String({ format: 'date-time' }),
  action: Type.String({ description: 'What was done, `<thing>.<change>`: docs/audit-log.md lists them' }),
  target: Type.Union([Type.String(), Type.Null()], {
    description: 'The id, name or address of what was changed; null when it is the organisation itself'
  }),
  changes: Type.Record(Type.String(), Type.Unknown(), {
    description: 'Field names and their new values; never a key, a secret, a private key or a full URL (a URL\'s host only)'
  }),
  count: Type.Integer({ minimum: 1, description: 'Items the change touched; a bulk change is one entry' }),
  request_id: Type.String(),
  rewritten_at: Type.Optional(Type.String({
    format: 'date-time',
    description: 'When an erase (POST /v1/privacy/erase) replaced an address the entry named with its keyed hash (`erased:<hex>`); ' +
      'the entry is then listed where that happened, with its own `id` and `at`'
  }))
})

export const AuditQuery = Type.Object({
  ...PageQuery.properties,
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only this action, e.g. `api_key.rotated`' })),
  actor: Type.Optional(Type.String({
    minLength: 1, maxLength: 64, description: 'Only changes by this key id (`key_…`, `opk_…`), or through the command line (`cli:<user>`)'
  })),
  target: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'Only changes of this id, name or address' })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Only entries at or after this time (ISO 8601)' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Only entries at or before this time (ISO 8601)' }))
})
