import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { testCa } from './https_receiver.ts'

let serial = 0

/**
 * A server certificate for `names` (DNS names) signed by the test CA of https_receiver.ts (`testCa().caFile`), made
 * with `openssl` as that CA is. An engine given `OB_SMTP_CA_FILE=testCa().caFile` trusts it; nothing else does.
 */
export function issueCert (names: readonly string[]): { key: Buffer, cert: Buffer } {
  const ca = testCa()
  const n = `${process.pid}-${++serial}`
  const run = (args: string[]): void => { execFileSync('openssl', args, { cwd: ca.dir, stdio: 'ignore' }) }
  run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `s${n}.key`, '-out', `s${n}.csr`,
    '-subj', `/CN=${names[0]!}`])
  writeFileSync(join(ca.dir, `s${n}.cnf`), `subjectAltName=${names.map((d) => `DNS:${d}`).join(',')}\nextendedKeyUsage=serverAuth\n`)
  run(['x509', '-req', '-in', `s${n}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `s${n}.pem`, '-days', '2',
    '-extfile', `s${n}.cnf`])
  return { key: readFileSync(join(ca.dir, `s${n}.key`)), cert: readFileSync(join(ca.dir, `s${n}.pem`)) }
}

/** A self-signed certificate for `names`, valid for two days: a certificate no CA vouches for (nothing trusts it). */
export function selfSignedCert (names: readonly string[]): { key: Buffer, cert: Buffer } {
  const ca = testCa()
  const n = `${process.pid}-${++serial}`
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `x${n}.key`,
    '-out', `x${n}.pem`, '-days', '2', '-subj', `/CN=${names[0]!}`, '-addext', `subjectAltName=${names.map((d) => `DNS:${d}`).join(',')}`],
  { cwd: ca.dir, stdio: 'ignore' })
  return { key: readFileSync(join(ca.dir, `x${n}.key`)), cert: readFileSync(join(ca.dir, `x${n}.pem`)) }
}
