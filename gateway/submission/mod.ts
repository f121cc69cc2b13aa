import type { SMTPServer } from 'smtp-server'
import { createSubmissionServer, type SubmissionDeps } from './server.ts'
import { submissionTls } from './tls.ts'

export { MAX_SUBMISSION_BYTES } from './server.ts'
export { SubmissionTlsError } from './tls.ts'

export interface SubmissionListener {
  readonly server: SMTPServer
  readonly port: number
  /** Stops accepting, lets sessions finish, answers 421 to what is still open at the deadline. */
  close: (timeoutMs: number) => Promise<void>
}

/** SMTP submission on OB_SMTP_SUBMISSION_HOST / _PORT (the caller checks `config.submission.enabled`). */
export async function startSubmission (deps: SubmissionDeps): Promise<SubmissionListener> {
  const settings = deps.config.submission
  const tls = await submissionTls(
    { certFile: settings.tlsCertFile, keyFile: settings.tlsKeyFile }, new URL(deps.config.http.publicUrl).hostname
  )
  const { server } = createSubmissionServer(deps, tls)
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject)
    server.listen(settings.port, settings.host, () => { server.server.off('error', reject); resolve() })
  })
  const address = server.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : settings.port
  deps.log.info(
    { host: settings.host, port, selfSignedCertificate: tls.selfSigned, insecureAuth: settings.insecureAuth }, 'SMTP submission listening'
  )
  let closing: Promise<void> | undefined
  return {
    server,
    port,
    // Once: a second call (the gateway's drain after an earlier close) waits for the first.
    close: async (timeoutMs) => await (closing ??= new Promise<void>((resolve) => {
      (server as unknown as { options: { closeTimeout: number } }).options.closeTimeout = timeoutMs
      server.close(() => resolve())
    }))
  }
}
