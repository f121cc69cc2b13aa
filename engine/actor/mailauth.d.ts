/**
 * The parts of mailauth's DKIM signer that the engine uses on their own (the package ships no types for them):
 * header selection and relaxed canonicalisation, the signature header's format, and the relaxed body hash.
 */
declare module 'mailauth/lib/tools.js' {
  export interface ParsedHeader { key: string | null, casedKey: string | undefined, line: Buffer }
  export interface SigningHeaderLines { keys: string, headers: ParsedHeader[] }
  const tools: {
    parseHeaders: (buf: Buffer) => { parsed: ParsedHeader[], original: Buffer }
    getSigningHeaderLines: (parsed: ParsedHeader[], fieldNames: string) => SigningHeaderLines
    formatSignatureHeaderLine: (type: 'DKIM', values: Record<string, unknown>, folded: boolean) => string
    formatRelaxedLine: (line: Buffer, suffix?: string) => Buffer
  }
  export default tools
}

declare module 'mailauth/lib/dkim/header/index.js' {
  import type { SigningHeaderLines } from 'mailauth/lib/tools.js'
  const header: {
    generateCanonicalizedHeader: (type: 'DKIM', lines: SigningHeaderLines, options: {
      signingDomain: string
      selector: string
      algorithm: string
      canonicalization: string
      bodyHash: string
      signTime: Date
    }) => { canonicalizedHeader: Buffer, dkimHeaderOpts: Record<string, unknown> }
  }
  export default header
}

declare module 'mailauth/lib/dkim/body/relaxed.js' {
  interface RelaxedHash {
    update: (chunk: Buffer) => void
    digest: (encoding: 'base64') => string
  }
  const body: { RelaxedHash: new (algorithm: string) => RelaxedHash }
  export default body
}
