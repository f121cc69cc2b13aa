import { Objm, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import { ApiError, OBJ_INBOUND_RAW, inboundRawReaders } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { errorResponses } from '../schemas/control.ts'

const NOT_FOUND = 'No kept message with this id for the organisation: its event carried it whole, it is older than 7 days, ' +
  'or it is another organisation\'s'

/** The bucket is opened once per connection; until an inbound process has created it there is nothing to read. */
const buckets = new WeakMap<NatsConnection, Promise<ObjectStore>>()

function bucketOf (nc: NatsConnection): Promise<ObjectStore> {
  let b = buckets.get(nc)
  if (b === undefined) {
    b = new Objm(nc).open(OBJ_INBOUND_RAW)
    b.catch(() => buckets.delete(nc))
    buckets.set(nc, b)
  }
  return b
}

/** Unavailable JetStream is a 503 to retry. */
function unavailable (err: unknown): ApiError {
  return new ApiError('service_unavailable', 'The inbound message store is unavailable; retry shortly.', { cause: err, retryAfter: 1 })
}

export const inboundRawRoutes = [
  route({
    method: 'get',
    path: '/v1/inbound/messages/:id/raw',
    idPrefix: 'msg',
    permission: 'read',
    summary: 'The whole received message (message/rfc822) of an inbound.received event that left part of it out',
    description: 'An `inbound.received` event is at most OB_INBOUND_EVENT_MAX_BYTES (64 KB) of JSON; when the message did not fit, ' +
      'the event carries excerpts and `raw: {url, size}`, and `url` is this endpoint. It answers the message exactly as it was received ' +
      '(`Content-Type: message/rfc822`), for 7 days after it was received, to the organisations whose events point here. ' +
      'Any other id (a message whose events carried it whole, one of another organisation, one older than 7 days) is 404 `not_found`.',
    tag: 'Inbound routes',
    responses: {
      200: { description: 'The message as received, `Content-Type: message/rfc822`' },
      ...errorResponses({ forbidden: 'The key lacks read', not_found: NOT_FOUND })
    },
    handler: async ({ deps, auth, params }) => {
      const id = params.id!
      let bucket: ObjectStore
      try {
        bucket = await bucketOf(deps.nc)
      } catch {
        throw new ApiError('not_found', NOT_FOUND)
      }
      const info = await bucket.info(id).catch((err: unknown) => { throw unavailable(err) })
      if (info === null || info.deleted || !inboundRawReaders(info.metadata).includes(auth.org.id)) {
        throw new ApiError('not_found', NOT_FOUND)
      }
      const data = await bucket.getBlob(id).catch((err: unknown) => { throw unavailable(err) })
      if (data === null) throw new ApiError('not_found', NOT_FOUND)
      return { status: 200, raw: { contentType: 'message/rfc822', data: Buffer.from(data.buffer, data.byteOffset, data.byteLength) } }
    }
  })
]
