import { jetstreamManager, type MsgRequest } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { INBOUND_SUBJECTS, STREAM_INBOUND, decodeJob, type DomainRecord, type InboundJob } from '../../protocol/mod.ts'
import { isStreamNotFound } from '../clients/mod.ts'

/**
 * Received mail still waiting in the work queue OB_INBOUND for an erase (POST /v1/privacy/erase): the jobs whose
 * envelope names the address, as sender or recipient, and that were received at one of the organisation's domains.
 * Such a message becomes events naming the address once it is processed, so the erase waits for it instead of
 * running (docs/privacy.md). Removing it is not safe: the same message may be received by other organisations'
 * routes, and a job an inbound process has already taken cannot be recalled.
 *
 * The queue has no index by address, but it holds only mail not yet processed (normally for well under a second),
 * and each job is at most INBOUND_JOB_MAX_BYTES (64 KB, its envelope first): a scan reads at most
 * `INBOUND_ERASE_SCAN_MAX_JOBS` jobs. A longer queue (a backlog) is not read at all; the erase is told to wait for it.
 */

/** Jobs read at most per erase: 1,000 × 64 KB = 64 MB at worst, usually a few KB each. */
export const INBOUND_ERASE_SCAN_MAX_JOBS = 1000

/** At most this many message ids are named. */
const MAX_IDS = 100

export type WaitingInbound =
  | { kind: 'none' }
  /** Received messages (their `msg_…` ids, at most 100) naming the address, not processed yet. */
  | { kind: 'found', messageIds: string[] }
  /** More than INBOUND_ERASE_SCAN_MAX_JOBS jobs are waiting: not searched. */
  | { kind: 'backlog', waiting: number }

/** The verified domain of a name, as the control plane's index answers it. */
export type DomainOwner = (name: string) => DomainRecord | undefined

/**
 * Whether a job concerns the organisation and the address (bare, lower-cased): its envelope sender or one of its
 * recipients is the address, and one of its recipients is at a domain of the organisation, or at a name under one
 * (its bounce and report addresses at `bounces.<domain>` or its return-path host).
 */
export function jobNamesAddressFor (
  job: Pick<InboundJob, 'mail_from' | 'rcpt_to'>, orgId: string, address: string, owner: DomainOwner
): boolean {
  const rcpts = job.rcpt_to.map((r) => r.trim().toLowerCase())
  if (job.mail_from.trim().toLowerCase() !== address && !rcpts.includes(address)) return false
  return rcpts.some((r) => {
    const labels = r.slice(r.lastIndexOf('@') + 1).split('.')
    for (let i = 0; i < labels.length - 1; i++) if (owner(labels.slice(i).join('.'))?.org_id === orgId) return true
    return false
  })
}

/** The received messages naming `address` (bare, lower-cased) for the organisation that are still waiting to be processed. */
export async function waitingInbound (nc: NatsConnection, orgId: string, address: string, owner: DomainOwner): Promise<WaitingInbound> {
  const jsm = await jetstreamManager(nc)
  let state
  try {
    state = (await jsm.streams.info(STREAM_INBOUND)).state
  } catch (err) {
    if (isStreamNotFound(err)) return { kind: 'none' } // no inbound process has run yet
    throw err
  }
  if (state.messages === 0) return { kind: 'none' }
  if (state.messages > INBOUND_ERASE_SCAN_MAX_JOBS) return { kind: 'backlog', waiting: state.messages }
  const ids: string[] = []
  // jobs received after the scan began are mail received after the erase: new data, not looked at
  let seq = state.first_seq
  for (let read = 0; read < INBOUND_ERASE_SCAN_MAX_JOBS && seq <= state.last_seq; read++) {
    // STREAM.MSG.GET takes `next_by_subj` (nats-server 2.9); the client's type lists it for direct gets only, which
    // this work queue does not allow, and a consumer of its own would overlap the inbound processes' one
    const m = await jsm.streams.getMessage(STREAM_INBOUND, { seq, next_by_subj: INBOUND_SUBJECTS } as unknown as MsgRequest)
    if (m === null || m.seq > state.last_seq) break
    seq = m.seq + 1
    let job: InboundJob
    try { job = decodeJob(m.data).job } catch { continue } // a malformed job is dropped unprocessed
    if (jobNamesAddressFor(job, orgId, address, owner) && ids.length < MAX_IDS) ids.push(job.id)
  }
  return ids.length === 0 ? { kind: 'none' } : { kind: 'found', messageIds: ids }
}
