import { generateKeyPair, randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import { ApiError, type DkimKeyPair, type DkimKeyRecord, type DomainRecord } from '../../protocol/mod.ts'
import { type ControlPlane } from '../../stores/control_plane/mod.ts'

const generateKeyPairAsync = promisify(generateKeyPair)

/** How long the TXT records of keys a rotation replaced stay listed: mail signed just before is still checked. */
export const RETIRED_DKIM_LISTED_MS = 7 * 24 * 3600 * 1000

export type DkimAlgorithm = 'rsa-sha256' | 'ed25519-sha256'
export type DnsRecordListed = DomainRecord['records'][number] & { listed_until?: string }

/** The ed25519 selector paired with an RSA one. */
export function ed25519Selector (rsaSelector: string): string {
  return `${rsaSelector}ed`
}

export function dkimRecordName (domain: string, selector: string): string {
  return `${selector}._domainkey.${domain}`
}

/** An RSA-2048 key; the record publishes its SubjectPublicKeyInfo. */
export async function rsaKey (selector: string): Promise<DkimKeyRecord> {
  const { publicKey, privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' }
  })
  return { selector, private_key: privateKey, public_key: publicKey.toString('base64') }
}

/** An ed25519 key; RFC 8463 §4.2: the record publishes the raw 32-byte public key, not a SubjectPublicKeyInfo. */
export async function ed25519Key (selector: string): Promise<DkimKeyRecord> {
  const { publicKey, privateKey } = await generateKeyPairAsync('ed25519', {
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' }
  })
  return { selector, private_key: privateKey, public_key: publicKey.subarray(-32).toString('base64') }
}

export function dkimTxt (domain: string, key: DkimKeyRecord, kind: 'rsa' | 'ed25519'): DomainRecord['records'][number] {
  return { type: 'TXT', name: dkimRecordName(domain, key.selector), value: `v=DKIM1; k=${kind}; p=${key.public_key}` }
}

/** A rotation's key pair under fresh selectors (`ob` + date + random), so it never collides with one in use. */
export async function newKeyPair (now: Date): Promise<DkimKeyPair> {
  const day = now.toISOString().slice(0, 10).replace(/-/g, '')
  const selector = `ob${day}${randomBytes(3).toString('hex')}`
  const [rsa, ed25519] = await Promise.all([rsaKey(selector), ed25519Key(ed25519Selector(selector))])
  return { rsa, ed25519, created_at: now.toISOString() }
}

/**
 * The DKIM records listed besides the stored ones (which hold the signing RSA key's record): the signing ed25519
 * key, a rotation's pair waiting for DNS, and replaced keys until their `listed_until`.
 */
export function extraDkimRecords (d: DomainRecord, nowMs: number): DnsRecordListed[] {
  const out: DnsRecordListed[] = []
  if (d.dkim_ed25519 !== undefined) out.push(dkimTxt(d.name, d.dkim_ed25519, 'ed25519'))
  if (d.dkim_next !== undefined) out.push(dkimTxt(d.name, d.dkim_next.rsa, 'rsa'), dkimTxt(d.name, d.dkim_next.ed25519, 'ed25519'))
  for (const r of d.dkim_retired ?? []) {
    if (Date.parse(r.listed_until) > nowMs) out.push({ ...r.record, listed_until: r.listed_until })
  }
  return out
}

export interface DkimSelectorView { selector: string, algorithm: DkimAlgorithm }

/** The selectors that sign now and those a rotation added that wait for their DNS records. */
export function dkimView (d: DomainRecord): { signing: DkimSelectorView[], pending: DkimSelectorView[] } {
  const signing: DkimSelectorView[] = [{ selector: d.dkim_selector, algorithm: 'rsa-sha256' }]
  if (d.dkim_ed25519 !== undefined && d.dkim_ed25519_verified_at !== undefined) {
    signing.push({ selector: d.dkim_ed25519.selector, algorithm: 'ed25519-sha256' })
  }
  const pending: DkimSelectorView[] = []
  if (d.dkim_ed25519 !== undefined && d.dkim_ed25519_verified_at === undefined) {
    pending.push({ selector: d.dkim_ed25519.selector, algorithm: 'ed25519-sha256' })
  }
  if (d.dkim_next !== undefined) {
    pending.push(
      { selector: d.dkim_next.rsa.selector, algorithm: 'rsa-sha256' },
      { selector: d.dkim_next.ed25519.selector, algorithm: 'ed25519-sha256' }
    )
  }
  return { signing, pending }
}

/** A domain stored before ed25519 keys existed gets one, under the ed25519 selector paired with its RSA one. */
export async function ensureEd25519 (cp: ControlPlane, domain: DomainRecord): Promise<DomainRecord> {
  if (domain.dkim_ed25519 !== undefined) return domain
  const key = await ed25519Key(ed25519Selector(domain.dkim_selector))
  const stored = await cp.domains.modify(`${domain.org_id}.${domain.id}`, (d) => {
    // a concurrent request may have added one first, or a rotation changed the selector: keep what is stored
    if (d.dkim_ed25519 !== undefined || d.dkim_selector !== domain.dkim_selector) return undefined
    return { ...d, dkim_ed25519: key }
  })
  return stored ?? domain
}

/** Adds a rotation's key pair; one rotation at a time (409 while one waits for its DNS records). */
export async function startRotation (cp: ControlPlane, domain: DomainRecord, now = new Date()): Promise<DomainRecord> {
  const pendingConflict = (d: DomainRecord): ApiError => new ApiError('conflict',
    `A DKIM rotation of ${d.name} is already waiting for its DNS records ` +
      `(selectors ${d.dkim_next!.rsa.selector} and ${d.dkim_next!.ed25519.selector}); publish them and verify the domain.`,
    { details: { selectors: [d.dkim_next!.rsa.selector, d.dkim_next!.ed25519.selector] } })
  if (domain.dkim_next !== undefined) throw pendingConflict(domain)
  const pair = await newKeyPair(now)
  let conflict: DomainRecord | undefined
  const stored = await cp.domains.modify(`${domain.org_id}.${domain.id}`, (d) => {
    if (d.dkim_next !== undefined) {
      conflict = d
      return undefined
    }
    return { ...d, dkim_next: pair }
  })
  if (conflict !== undefined) throw pendingConflict(conflict)
  if (stored === undefined) throw new ApiError('not_found', 'No domain with this id')
  return stored
}

/**
 * The domain after a DNS check (`published` holds `name\nvalue` of every record found): the ed25519 key signs
 * once its record is found; a rotation's pair takes over once both its records are, and the replaced keys' records
 * stay listed for RETIRED_DKIM_LISTED_MS. Undefined when nothing changes. Pure, for `modify` to re-run.
 */
export function applyDkimCheck (d: DomainRecord, published: ReadonlySet<string>, at: Date): DomainRecord | undefined {
  const isPublished = (r: DomainRecord['records'][number]): boolean => published.has(`${r.name}\n${r.value}`)
  let next: DomainRecord | undefined
  if (d.dkim_ed25519 !== undefined && d.dkim_ed25519_verified_at === undefined && isPublished(dkimTxt(d.name, d.dkim_ed25519, 'ed25519'))) {
    next = { ...d, dkim_ed25519_verified_at: at.toISOString() }
  }
  const pair = d.dkim_next
  if (pair !== undefined && isPublished(dkimTxt(d.name, pair.rsa, 'rsa')) && isPublished(dkimTxt(d.name, pair.ed25519, 'ed25519'))) {
    const base = next ?? d
    const oldName = dkimRecordName(d.name, d.dkim_selector)
    const listedUntil = new Date(at.getTime() + RETIRED_DKIM_LISTED_MS).toISOString()
    const retired = (base.dkim_retired ?? []).filter((r) => Date.parse(r.listed_until) > at.getTime())
    const oldRsa = base.records.find((r) => r.type === 'TXT' && r.name === oldName)
    if (oldRsa !== undefined) retired.push({ record: oldRsa, listed_until: listedUntil })
    if (base.dkim_ed25519 !== undefined) retired.push({ record: dkimTxt(d.name, base.dkim_ed25519, 'ed25519'), listed_until: listedUntil })
    // found published just now, as its `verified` says
    const newRsa = { ...dkimTxt(d.name, pair.rsa, 'rsa'), verified: true }
    const records = oldRsa !== undefined ? base.records.map((r) => r === oldRsa ? newRsa : r) : [...base.records, newRsa]
    const { dkim_next: _done, ...rest } = base
    next = {
      ...rest,
      dkim_selector: pair.rsa.selector,
      dkim_private_key: pair.rsa.private_key,
      dkim_public_key: pair.rsa.public_key,
      dkim_ed25519: pair.ed25519,
      dkim_ed25519_verified_at: at.toISOString(),
      dkim_retired: retired,
      records
    }
  }
  return next
}
