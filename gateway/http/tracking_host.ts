import { isIP } from 'node:net'
import { domainOfHost, type DomainRecord } from '../../protocol/mod.ts'

/** What `trackingHostOf` needs of the control plane: the verified domain of a name. */
export interface DomainOwners { domainOwner: (name: string) => DomainRecord | undefined }

/** A host name as a `Host` header may carry it: labels of letters, digits and hyphens. */
const HOST_NAME = /^[a-z0-9]([a-z0-9-]{0,62})(\.[a-z0-9]([a-z0-9-]{0,62}))*$/

/**
 * Whom a tracking request's `Host` serves: `public` for the installation's own (the host of OB_PUBLIC_URL, an
 * address literal or `localhost`, which is how a client or a reverse proxy that does not pass the host on reaches
 * the process; no header at all likewise), the verified domain whose verified tracking host it is, or undefined
 * (refused: any other name pointed at the installation would otherwise serve links under a name nobody verified).
 */
export function trackingHostOf (cp: DomainOwners, publicUrl: string, header: string): 'public' | DomainRecord | undefined {
  const raw = header.trim().toLowerCase()
  if (raw === '') return 'public'
  if (raw.startsWith('[')) {
    return /^\[[0-9a-f:.]+\](:\d{1,5})?$/.test(raw) && isIP(raw.slice(1, raw.indexOf(']'))) === 6 ? 'public' : undefined
  }
  const host = raw.replace(/:\d{1,5}$/, '').replace(/\.$/, '')
  if (isIP(host) === 4 || host === 'localhost' || host === new URL(publicUrl).hostname.toLowerCase()) return 'public'
  if (!HOST_NAME.test(host)) return undefined
  return domainOfHost((name) => cp.domainOwner(name), host, 'tracking')
}

/**
 * Whether a reverse proxy may obtain a certificate for `host` (lower case, no port): the public host, or a verified
 * tracking host. Never an address or `localhost`, which no certificate authority issues for.
 */
export function servesCertificateFor (cp: DomainOwners, publicUrl: string, host: string): boolean {
  if (host === '' || isIP(host) !== 0 || host === 'localhost') return false
  if (host === new URL(publicUrl).hostname.toLowerCase()) return true
  return HOST_NAME.test(host) && domainOfHost((name) => cp.domainOwner(name), host, 'tracking') !== undefined
}
