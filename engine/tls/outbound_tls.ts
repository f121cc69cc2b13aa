import { rootCertificates } from 'node:tls'

/**
 * The certificate authorities outbound TLS trusts when it verifies a peer (the relay, an MX host under an MTA-STS
 * policy, a policy or report server): Node's bundled roots plus the operator's `OB_SMTP_CA_FILE` (a private CA,
 * or a test's). Built once per thread; `undefined` keeps Node's default (the bundled roots) without a copy.
 */
export function trustedCas (extraPem: string | undefined): string[] | undefined {
  if (extraPem === undefined || extraPem.trim() === '') return undefined
  return [...rootCertificates, extraPem]
}

/** RFC 8460 §4.3 result types of a failed TLS session that a sender can observe. */
export type TlsResultType =
  | 'starttls-not-supported'
  | 'certificate-host-mismatch'
  | 'certificate-expired'
  | 'certificate-not-trusted'
  | 'validation-failure'
  | 'sts-policy-fetch-error'
  | 'sts-policy-invalid'
  | 'sts-webpki-invalid'

/** The error fields read here: nodemailer's `code`, `originalCode` (the wrapped error's own code) and `command`. */
interface TlsErrorLike { code?: unknown, originalCode?: unknown, command?: unknown, message?: unknown }

/**
 * OpenSSL's and Node's codes for a certificate that does not verify. A failed handshake reaches us as nodemailer's
 * `ESOCKET` with the TLS error's code kept as `originalCode`.
 */
const CERT_CODES: Readonly<Record<string, TlsResultType>> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'certificate-not-trusted',
  SELF_SIGNED_CERT_IN_CHAIN: 'certificate-not-trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'certificate-not-trusted',
  UNABLE_TO_GET_ISSUER_CERT: 'certificate-not-trusted',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'certificate-not-trusted',
  CERT_UNTRUSTED: 'certificate-not-trusted',
  CERT_SIGNATURE_FAILURE: 'certificate-not-trusted',
  CERT_REVOKED: 'certificate-not-trusted',
  CERT_HAS_EXPIRED: 'certificate-expired',
  CERT_NOT_YET_VALID: 'certificate-expired',
  ERR_TLS_CERT_ALTNAME_INVALID: 'certificate-host-mismatch',
  HOSTNAME_MISMATCH: 'certificate-host-mismatch'
}

/**
 * The RFC 8460 result type of a failed verified-TLS attempt, or undefined when the failure is not about TLS (a
 * refused connection, a reply to MAIL or RCPT). The one place that reads nodemailer's and Node's TLS error codes.
 */
export function tlsFailureType (err: TlsErrorLike): TlsResultType | undefined {
  const code = typeof err.code === 'string' ? err.code : ''
  const original = typeof err.originalCode === 'string' ? err.originalCode : code
  const cert = CERT_CODES[original]
  if (cert !== undefined) return cert
  if (code === 'ETLS' || err.command === 'STARTTLS') {
    // refused or not offered: the reply to STARTTLS was not 2xx; else the handshake could not start
    const message = typeof err.message === 'string' ? err.message : ''
    return message.startsWith('Error initiating TLS') ? 'validation-failure' : 'starttls-not-supported'
  }
  if (/^ERR_SSL_|^ERR_TLS_/.test(original)) return 'validation-failure'
  return undefined
}

/** How a result type reads in a deferral's reason. */
export const TLS_FAILURE_TEXT: Readonly<Record<TlsResultType, string>> = {
  'starttls-not-supported': 'the server does not offer STARTTLS',
  'certificate-host-mismatch': 'the certificate does not name the MX host',
  'certificate-expired': 'the certificate has expired',
  'certificate-not-trusted': 'the certificate is not signed by a trusted authority',
  'validation-failure': 'the TLS session could not be established',
  'sts-policy-fetch-error': 'the policy could not be fetched',
  'sts-policy-invalid': 'the policy is not valid',
  'sts-webpki-invalid': 'the policy server\'s certificate does not verify'
}
