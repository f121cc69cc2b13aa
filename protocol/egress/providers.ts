import { createHash } from 'node:crypto'

/**
 * Mailbox providers recognised from a destination's MX host names, so that every domain a provider hosts shares
 * one set of limits, one warm-up count and one throttle state per source: ten thousand Workspace domains are one
 * `google`, not ten thousand sites that each let a new address send its first fifty messages.
 *
 * A provider matches when EVERY MX host of the destination ends in one of its suffixes (at a dot boundary). A
 * domain that blends providers (a Google MX and a backup MX of its own) is its own site: that is KumoMTA's rule too
 * ("every hostname from the MX record must match", docs/userguide/trafficshaping/rollups.md), chosen there to
 * avoid guessing for vanity domains. The suffixes are the providers' real MX names (`dig mx gmail.com` …);
 * gateways with one set of servers per region (Mimecast) are left as sites, each region with its own limits.
 */
export interface Provider {
  /** Stable id: lane ids, Redis keys, overrides and docs name it. */
  id: string
  name: string
  /** MX host name suffixes, lower case, without leading or trailing dot. */
  mx: readonly string[]
}

export const PROVIDERS: readonly Provider[] = [
  // aspmx.l.google.com, alt1-4.aspmx.l.google.com, smtp.google.com (Workspace since 2023),
  // gmail-smtp-in.l.google.com, aspmx2/3.googlemail.com: Gmail and Workspace share these servers
  { id: 'google', name: 'Google (Gmail, Google Workspace)', mx: ['google.com', 'googlemail.com'] },
  // <tenant>.mail.protection.outlook.com (Microsoft 365), hotmail-com / outlook-com.olc.protection.outlook.com
  // (Outlook.com, Hotmail, Live, MSN), <tenant>.<x>.mx.microsoft (Microsoft 365 with DANE), mx1-4.hotmail.com (legacy)
  {
    id: 'microsoft',
    name: 'Microsoft (Outlook.com, Hotmail, Microsoft 365)',
    mx: ['mail.protection.outlook.com', 'olc.protection.outlook.com', 'mx.microsoft', 'hotmail.com']
  },
  // mta5/6/7.am0.yahoodns.net (Yahoo), mx-aol.mail.gm0.yahoodns.net (AOL), mailin-0x.mx.aol.com (AOL, legacy),
  // mx-att.mail.am0.yahoodns.net (AT&T consumer domains). yahoo.co.jp runs other servers: a site.
  { id: 'yahoo', name: 'Yahoo (Yahoo Mail, AOL)', mx: ['yahoodns.net', 'mx.aol.com'] },
  // mx01.mail.icloud.com, mx02.mail.icloud.com (icloud.com, me.com, mac.com and iCloud custom domains)
  { id: 'apple', name: 'Apple (iCloud Mail)', mx: ['mail.icloud.com', 'mail.me.com'] },
  // mx00/01.emig.gmx.net (gmx.net, gmx.de), mx00/01.gmx.com, mx-ha02/03.web.de, mx00/01.mail.com: one company's servers
  { id: 'gmx', name: 'GMX, WEB.DE, mail.com', mx: ['gmx.net', 'gmx.com', 'web.de', 'mail.com'] },
  // smtp-in.orange.fr (orange.fr, wanadoo.fr)
  { id: 'orange', name: 'Orange', mx: ['orange.fr'] },
  // mx1h1.comcast.net, mx2c1.comcast.net (domains moved to Yahoo's MX count as yahoo)
  { id: 'comcast', name: 'Comcast (Xfinity)', mx: ['comcast.net'] },
  // mx.zoho.com, mx2.zoho.com, mx3.zoho.com and the regional mx.zoho.eu, .in, .com.au, .jp, mx.zohomail.com
  { id: 'zoho', name: 'Zoho Mail', mx: ['zoho.com', 'zoho.eu', 'zoho.in', 'zoho.com.au', 'zoho.jp', 'zohomail.com'] },
  // in1-smtp.messagingengine.com, in2-smtp.messagingengine.com
  { id: 'fastmail', name: 'Fastmail', mx: ['messagingengine.com'] },
  // mail.protonmail.ch, mailsec.protonmail.ch (proton.me, protonmail.com and custom domains)
  { id: 'protonmail', name: 'Proton Mail', mx: ['protonmail.ch'] },
  // mx.yandex.ru (yandex.ru, yandex.com), mx.yandex.net (Yandex 360 domains)
  { id: 'yandex', name: 'Yandex Mail', mx: ['yandex.ru', 'yandex.net'] },
  // mxs.mail.ru, emx.mail.ru (mail.ru, bk.ru, inbox.ru, list.ru, VK WorkMail domains)
  { id: 'mailru', name: 'Mail.ru', mx: ['mail.ru'] }
]

/** A site id longer than this is replaced by a hash of its MX names, so lane ids and Redis keys stay short. */
export const MAX_SITE_ID_LENGTH = 200
const SITE_HASH_LENGTH = 32 // hex characters of sha256: 128 bits, no collision among real MX sets

/** The prefix of a provider id that is a site (an MX set no provider claims). */
export const SITE_PREFIX = 'site:'

/** Lower case, no surrounding spaces, no trailing dot (DNS answers may carry the root's dot). */
function hostName (name: string): string {
  return name.trim().toLowerCase().replace(/\.+$/, '')
}

function within (host: string, suffix: string): boolean {
  return host === suffix || host.endsWith(`.${suffix}`)
}

/**
 * The provider id of a destination from its MX host names (any order, any case, trailing dot ignored): a
 * provider's id from PROVIDERS when every host is that provider's, else the site `site:<names sorted, joined by ','>`
 * (past MAX_SITE_ID_LENGTH characters, `site:` + the first 32 hex characters of the names' sha256). With no MX
 * names (implicit MX: the domain itself receives) it is `site:<domain>`; with neither, `site:`.
 */
export function providerOf (mxHosts: readonly string[], domain?: string): string {
  const hosts = [...new Set(mxHosts.map(hostName).filter((h) => h !== ''))].sort()
  if (hosts.length === 0) return siteId(hostName(domain ?? ''))
  for (const provider of PROVIDERS) {
    if (hosts.every((host) => provider.mx.some((suffix) => within(host, suffix)))) return provider.id
  }
  return siteId(hosts.join(','))
}

function siteId (names: string): string {
  const id = SITE_PREFIX + names
  if (id.length <= MAX_SITE_ID_LENGTH) return id
  return SITE_PREFIX + createHash('sha256').update(names).digest('hex').slice(0, SITE_HASH_LENGTH)
}

/** Whether `id` names a provider of PROVIDERS (not a site). */
export function isKnownProvider (id: string): boolean {
  return PROVIDERS.some((p) => p.id === id)
}
