/**
 * Addresses no receiver on the internet ever sees mail from: loopback (127/8, ::1), private (10/8, 172.16/12,
 * 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10) and "this network" (0/8). A DNS record naming one is
 * a configuration mistake (an SPF source or an MX host that only this machine can reach).
 */
function ipv4Kind (ip: string): string | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip)
  if (m === null) return undefined
  const [a, b] = [Number(m[1]), Number(m[2])]
  if (a === 127) return 'loopback'
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private'
  if (a === 169 && b === 254) return 'link-local'
  if (a === 0) return 'not routable'
  return undefined
}

function ipv6Kind (ip: string): string | undefined {
  const lower = ip.toLowerCase()
  if (!lower.includes(':') || !/^[0-9a-f:.]+$/.test(lower)) return undefined
  if (/^(0{0,4}:){2,7}0{0,3}1$/.test(lower) || lower === '::1') return 'loopback'
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (mapped !== null) return ipv4Kind(mapped[1]!)
  const first = lower.startsWith(':') ? 0 : parseInt(lower.split(':')[0]!, 16)
  if ((first & 0xfe00) === 0xfc00) return 'private'
  if ((first & 0xffc0) === 0xfe80) return 'link-local'
  return undefined
}

/** What kind of non-public address `ip` (IPv4 or IPv6, an optional /prefix) is, or undefined for a public one. */
export function nonPublicKind (ip: string): string | undefined {
  const bare = ip.replace(/\/\d+$/, '')
  return ipv4Kind(bare) ?? ipv6Kind(bare)
}

/**
 * The non-public addresses a DNS record's value names: SPF `ip4:`/`ip6:` mechanisms (with any qualifier), and
 * an MX or CNAME target written as an address or `localhost`. Each as `<address> (<kind>)`.
 */
export function nonPublicValues (type: string, value: string): string[] {
  const out: string[] = []
  if (type === 'TXT' && /^v=spf1(\s|$)/i.test(value)) {
    for (const term of value.split(/\s+/)) {
      const m = /^[+\-~?]?ip[46]:(.+)$/i.exec(term)
      const kind = m === null ? undefined : nonPublicKind(m[1]!)
      if (kind !== undefined) out.push(`${m![1]!} (${kind})`)
    }
  } else if (type === 'MX' || type === 'CNAME') {
    const target = (type === 'MX' ? value.split(/\s+/)[1] ?? '' : value).replace(/\.$/, '')
    const kind = target.toLowerCase() === 'localhost' ? 'loopback' : nonPublicKind(target)
    if (kind !== undefined) out.push(`${target} (${kind})`)
  }
  return out
}
