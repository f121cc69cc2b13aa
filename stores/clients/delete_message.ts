import type { JetStreamManager } from '@nats-io/jetstream'
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream'

/**
 * JSStreamMsgDeleteFailedF (server/errors.json): what nats-server 2.9 answers for a delete of a sequence it does not
 * store (with the text "no message found"), as for any other failed delete. Newer servers may answer
 * JSNoMessageFoundErr (10037) instead.
 */
const MSG_DELETE_FAILED = 10057

/**
 * Removes one message of a stream by sequence: true when this call removed it, false when it was not stored (already
 * removed: acknowledged from a work queue, or deleted by someone else). A failed delete (10057) is told from a missing
 * message by reading the sequence back, never by the error's text; any other failure is thrown. `overwrite` has the
 * server write over the message's bytes where they were stored (a privacy erase); a work queue's delete needs not.
 */
export async function deleteIfStored (
  jsm: JetStreamManager, stream: string, seq: number, opts: { overwrite?: boolean } = {}
): Promise<boolean> {
  try {
    await jsm.streams.deleteMessage(stream, seq, opts.overwrite === true)
    return true
  } catch (err) {
    if (!(err instanceof JetStreamApiError)) throw err
    if (err.code === JetStreamApiCodes.NoMessageFound) return false
    if (err.code === MSG_DELETE_FAILED && (await jsm.streams.getMessage(stream, { seq })) === null) return false
    throw err
  }
}
