import { generateKeyPairSync } from 'node:crypto'
import { Resolver } from 'node:dns/promises'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Redis } from 'ioredis'
import { authenticate } from 'mailauth'
import { TlsCounterBatch, type TlsFailureDetail } from '../../stores/tls_reports/mod.ts'

/**
 * The pieces of the TLS report scenarios: the report sender's DKIM key (a PEM file for OB_REPORT_DKIM_KEY_FILE and
 * the TXT record to publish), yesterday's counters as a shard thread writes them, and the metric.
 */
export interface ReportSenderKey {
  file: string, selector: string, domain: string, record: string, env: Record<string, string>, remove: () => void
}

export function reportSenderKey (from = 'tls-reports@outbox.example', selector = 'tlsrpt'): ReportSenderKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const dir = mkdtempSync(join(tmpdir(), 'outbox-tlsrpt-'))
  const file = join(dir, 'dkim.pem')
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }))
  const domain = from.slice(from.indexOf('@') + 1)
  return {
    file,
    selector,
    domain,
    record: `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`,
    env: { OB_REPORT_FROM: from, OB_REPORT_DKIM_SELECTOR: selector, OB_REPORT_DKIM_KEY_FILE: file },
    remove: () => { rmSync(dir, { recursive: true, force: true }) }
  }
}

export const TEST_POLICY = {
  type: 'sts' as const,
  strings: ['version: STSv1', 'mode: enforce', 'mx: mx.policy.test', 'max_age: 86400'],
  mx: ['mx.policy.test']
}

/** Yesterday's sessions with `domain`: `ok` verified ones and the failures given. */
export async function countYesterday (redis: Redis, domain: string, ok: number, failures: TlsFailureDetail[] = []): Promise<void> {
  const yesterday = new TlsCounterBatch(redis, () => Date.now() - 86_400_000)
  for (let i = 0; i < ok; i++) yesterday.note(domain, TEST_POLICY)
  for (const f of failures) yesterday.note(domain, TEST_POLICY, f)
  await yesterday.flush()
}

/** `outbox_tls_reports_total{transport, result}` of a scrape. */
export function tlsReportsCounted (scrape: string, transport: string, result: string): number {
  const line = scrape.split('\n').find((l) => l.startsWith('outbox_tls_reports_total{') &&
    l.includes(`transport="${transport}"`) && l.includes(`result="${result}"`))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
}

/** mailauth's DKIM verdict of `raw`, its keys looked up in the DNS server at `dnsAddress` (`127.0.0.1:port`). */
export async function dkimVerdict (raw: Buffer, dnsAddress: string): Promise<{ result: string, signingDomain?: string }> {
  const resolver = new Resolver()
  resolver.setServers([dnsAddress])
  const result = await authenticate(raw, {
    ip: '127.0.0.1',
    helo: 'mx.test',
    sender: 'x@outbox.example',
    mta: 'mx.test',
    resolver: async (name: string, rr: string) => await resolver.resolve(name, rr)
  } as Parameters<typeof authenticate>[1])
  const first = result.dkim.results[0]
  return { result: first?.status.result ?? 'none', ...(first?.signingDomain !== undefined ? { signingDomain: first.signingDomain } : {}) }
}
