import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { InternalErrorCode } from '../../protocol/mod.ts'

const run = promisify(execFile)

/** No certificate files were given and none could be made. */
export class SubmissionTlsError extends Error {
  readonly code = 'submission_tls_unavailable' satisfies InternalErrorCode
  constructor (message: string, opts?: ErrorOptions) {
    super(message, opts)
    this.name = 'SubmissionTlsError'
  }
}

export interface SubmissionTls { key: Buffer, cert: Buffer, selfSigned: boolean }

/**
 * The STARTTLS certificate: the PEM files named by OB_SMTP_TLS_CERT_FILE / OB_SMTP_TLS_KEY_FILE, else a
 * self-signed one (P-256, 10 years, CN = `hostName`) made at start with the `openssl` command, as node's crypto
 * can make keys but not certificates. Clients must then skip verification or pin it (docs/smtp-submission.md).
 */
export async function submissionTls (files: { certFile?: string, keyFile?: string }, hostName: string): Promise<SubmissionTls> {
  if (files.certFile !== undefined && files.keyFile !== undefined) {
    return { cert: await readFile(files.certFile), key: await readFile(files.keyFile), selfSigned: false }
  }
  const dir = await mkdtemp(join(tmpdir(), 'outbox-smtp-tls-'))
  try {
    const cn = /^[A-Za-z0-9.-]{1,64}$/.test(hostName) ? hostName : 'localhost'
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '3650',
      '-subj', `/CN=${cn}`, '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { timeout: 30_000 })
    return { key: await readFile(join(dir, 'key.pem')), cert: await readFile(join(dir, 'cert.pem')), selfSigned: true }
  } catch (err) {
    throw new SubmissionTlsError(
      'SMTP submission needs a TLS certificate: set OB_SMTP_TLS_CERT_FILE and OB_SMTP_TLS_KEY_FILE, ' +
      'or install openssl so a self-signed one can be made at start, or set OB_SMTP_SUBMISSION_PORT=0',
      { cause: err }
    )
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
