import { BlockList, isIP } from 'node:net';
export const MAX_WEBHOOK_URL_LENGTH = 2048;
/**
 * Addresses a webhook must not target unless the operator allows private targets: loopback, private,
 * carrier-grade NAT, link-local, multicast, reserved and the NAT64 prefix (which can map onto any IPv4
 * address, private ones included). IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) are matched against
 * the IPv4 ranges by BlockList itself.
 */
const PRIVATE = new BlockList();
for (const [net, bits] of [
    ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
    ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
    ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4]
])
    PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
    ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible form (::a.b.c.d)
    ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]
])
    PRIVATE.addSubnet(net, bits, 'ipv6');
/** True for an IP literal in one of the refused ranges. */
export function isPrivateAddress(ip) {
    const family = isIP(ip);
    if (family === 0)
        return false;
    return PRIVATE.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}
/**
 * Why a webhook URL is refused at creation, or undefined when it is acceptable. The host is taken from
 * `new URL`, which already normalises decimal, hexadecimal and octal IPv4 forms (`https://2130706433/`,
 * `https://0x7f.1/`) to dotted quads, so one range check covers them all. Host names are not resolved
 * here: the delivery side resolves them and refuses private answers just before connecting.
 */
export function webhookUrlProblem(raw, opts) {
    if (raw.length > MAX_WEBHOOK_URL_LENGTH)
        return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
    let url;
    try {
        url = new URL(raw);
    }
    catch {
        return 'must be an absolute https:// URL';
    }
    if (url.protocol !== 'https:')
        return 'must use https://';
    if (url.username !== '' || url.password !== '')
        return 'must not contain credentials';
    if (url.hostname === '')
        return 'must name a host';
    if (opts.allowPrivate)
        return undefined;
    const host = url.hostname.replace(/\.$/, '').toLowerCase();
    if (host === 'localhost' || host.endsWith('.localhost'))
        return 'must not point at localhost';
    const ip = host.startsWith('[') ? host.slice(1, -1) : host;
    if (isPrivateAddress(ip))
        return 'must not point at a private, loopback, link-local or multicast address';
    return undefined;
}
//# sourceMappingURL=webhook_url.js.map