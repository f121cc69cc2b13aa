import { ApiError, notOrgStreamMessage } from '../../protocol/mod.ts'
import type { GatewayDeps } from '../deps.ts'
import { fromStore } from './read_model.ts'

/**
 * 422 `stream_not_found` naming `stream`: a well-formed stream id that is not one of the organisation's streams. The
 * message is the same whether or not another organisation has a stream of that id.
 */
export function streamNotFound (id: string): ApiError {
  return new ApiError('stream_not_found', notOrgStreamMessage(id), { field: 'stream', details: { stream: id } })
}

/**
 * Checks the `stream` filter of a read of what was stored (messages, events, statistics, suppressions): the stream
 * must be one the organisation has (`transactional` always), or one it deleted of which something is still stored,
 * since a deleted stream's messages, events and suppressions stay. "Still stored" is what is known without a scan:
 * the read model holds messages or events of it (live or sandbox; they go with the retention, 30 days at most), or
 * the suppression list holds an entry of that stream alone. Anything else is `streamNotFound`. Only the
 * organisation's own streams and keys are looked at, so another organisation's stream of that id changes nothing.
 */
export async function assertReadableStream (deps: GatewayDeps, orgId: string, stream: string | undefined): Promise<void> {
  if (stream === undefined || deps.cp.streams.exists(orgId, stream)) return
  if (deps.cp.suppressionLists.hasStreamEntries(orgId, stream)) return
  if (await fromStore(deps.messages.hasStreamHistory(orgId, stream))) return
  throw streamNotFound(stream)
}
