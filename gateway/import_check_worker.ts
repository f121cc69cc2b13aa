import { ApiError } from '../protocol/mod.ts'
import { checkImport, type CheckedImport } from './control/suppression_import.ts'

/** A suppression import body to read and check, with what the check needs to know of the organisation. */
export interface ImportCheckTask {
  raw: Uint8Array
  contentType: string
  /** The organisation's message streams when the import was received. */
  streams: string[]
  now: number
}

/** An ApiError as it crosses back from the thread (a thrown error would arrive with its message only). */
export interface ImportCheckRefusal { refusal: { code: ApiError['code'], message: string, field?: string, errors?: ApiError['errors'] } }

/** The task of an import-check thread (import_check_thread.cts); `undefined` is the pool's close task. */
export default async function run (task: ImportCheckTask | undefined): Promise<CheckedImport | ImportCheckRefusal | undefined> {
  if (task === undefined) return undefined
  const raw = Buffer.from(task.raw.buffer, task.raw.byteOffset, task.raw.byteLength)
  try {
    return await checkImport(raw, task.contentType, task.streams, task.now)
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    return {
      refusal: {
        code: err.code,
        message: err.message,
        ...(err.field !== undefined ? { field: err.field } : {}),
        ...(err.errors !== undefined ? { errors: err.errors } : {})
      }
    }
  }
}
