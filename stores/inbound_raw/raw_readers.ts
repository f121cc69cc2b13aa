import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node'
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import type { ObjectStore } from '@nats-io/obj'
import { INBOUND_RAW_READERS, OBJ_INBOUND_RAW, inboundRawReaders } from '../../protocol/mod.ts'
import { isStreamNotFound, isWrongLastSequence } from '../clients/mod.ts'

/**
 * Who may read a received message kept whole in `ob_inbound_raw` (GET /v1/inbound/messages/{id}/raw): the object's
 * `ob-readers` metadata, written here only. The inbound processor records the readers when it keeps a message (the
 * organisations whose `inbound.received` left part of it out); an erase (POST /v1/privacy/erase) takes one
 * organisation off them, and deletes the message once no reader is left.
 */

const RAW_STREAM = `OBJ_${OBJ_INBOUND_RAW}`
/** An object's metadata subject, as the object store names it: `$O.<bucket>.M.<base64url(name), padded>`. */
function metaSubject (name: string): string {
  const b = Buffer.from(name).toString('base64url')
  return `$O.${OBJ_INBOUND_RAW}.M.${b}${'='.repeat((4 - b.length % 4) % 4)}`
}
/** A concurrent change of the same object's readers (another organisation's erase) is retried this often at most. */
const MAX_CONFLICTS = 5

/**
 * Keeps a processed message for `orgs` to read through the API. A message that travelled inside its job (`inline`) is
 * written to the bucket; one already there only gets its readers recorded. Either way it expires with the bucket's
 * TTL, counted from when it was stored.
 */
export async function keepForReaders (
  raw: ObjectStore, id: string, orgs: readonly string[], inline: Uint8Array | undefined
): Promise<void> {
  const metadata = { [INBOUND_RAW_READERS]: orgs.join(',') }
  if (inline !== undefined) await raw.putBlob({ name: id, metadata }, inline)
  else await raw.update(id, { metadata })
}

async function purgeChunks (jsm: JetStreamManager, nuid: string): Promise<void> {
  await jsm.streams.purge(RAW_STREAM, { filter: `$O.${OBJ_INBOUND_RAW}.C.${nuid}` })
}

/** What taking an organisation off a kept message's readers did. */
export type ReaderDropped = 'not_reader' | 'dropped' | 'deleted'

interface StoredInfo { name: string, nuid: string, deleted?: boolean, metadata?: Record<string, string>, [k: string]: unknown }

/**
 * Takes `orgId` off the readers of the kept message `name`, and deletes the message (its chunks purged, its
 * metadata marked deleted as the object store's own delete does) when no reader is left. The metadata is written
 * only if its subject still holds the version read (JetStream's expected last subject sequence), so two
 * organisations erasing at once cannot write back each other's reader: the later one reads again. `not_reader`: no
 * such message, already deleted, or the organisation is not among its readers.
 */
export async function dropReader (nc: NatsConnection, name: string, orgId: string): Promise<ReaderDropped> {
  const jsm = await jetstreamManager(nc)
  const js = jetstream(nc)
  for (let conflicts = 0; ; conflicts++) {
    let m
    try {
      m = await jsm.streams.getMessage(RAW_STREAM, { last_by_subj: metaSubject(name) })
    } catch (err) {
      if (isStreamNotFound(err)) return 'not_reader'
      throw err
    }
    if (m === null) return 'not_reader'
    const info = m.json<StoredInfo>()
    // a delete whose purge failed left chunks behind: purged again, whoever deleted it
    if (info.deleted === true) {
      await purgeChunks(jsm, info.nuid)
      return 'not_reader'
    }
    const readers = inboundRawReaders(info.metadata)
    if (!readers.includes(orgId)) return 'not_reader'
    const rest = readers.filter((r) => r !== orgId)
    const next: StoredInfo = rest.length > 0
      ? { ...info, metadata: { ...info.metadata, [INBOUND_RAW_READERS]: rest.join(',') } }
      : { ...info, deleted: true, size: 0, chunks: 0, digest: '', metadata: { ...info.metadata, [INBOUND_RAW_READERS]: '' } }
    delete next.revision
    const h = natsHeaders()
    // the new version replaces every older one of the subject, so no earlier reader list stays stored
    h.set('Nats-Rollup', 'sub')
    try {
      await js.publish(m.subject, JSON.stringify(next), { headers: h, expect: { lastSubjectSequence: m.seq } })
    } catch (err) {
      if (isWrongLastSequence(err) && conflicts < MAX_CONFLICTS) continue
      throw err
    }
    if (rest.length > 0) return 'dropped'
    await purgeChunks(jsm, info.nuid)
    return 'deleted'
  }
}
