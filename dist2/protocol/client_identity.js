import { isIP } from 'node:net';
/** The 8 groups of an IPv6 address (`isIP` already said it is one), with an IPv4 tail (`::ffff:1.2.3.4`) folded in. */
function hextets(v6) {
    let s = v6;
    const last = s.lastIndexOf(':');
    if (s.includes('.', last)) {
        const p = s.slice(last + 1).split('.').map(Number);
        s = `${s.slice(0, last + 1)}${((p[0] << 8) | p[1]).toString(16)}:${((p[2] << 8) | p[3]).toString(16)}`;
    }
    const [head, tail] = s.split('::');
    const h = head === '' ? [] : head.split(':');
    const t = tail === undefined || tail === '' ? [] : tail.split(':');
    const zeros = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0');
    return [...h, ...zeros, ...t].map((x) => parseInt(x, 16));
}
/**
 * An address as one client: IPv4 in dotted form, also when it arrives IPv4-mapped (a dual-stack listener reports
 * `0000:…:ffff:7f00:0001` for 127.0.0.1); an IPv6 address as its /64, since one host is routinely handed a whole
 * /64 and could otherwise be counted as 2^64 clients. `undefined` when `raw` is not an IP address.
 */
export function clientIdentity(raw) {
    const address = raw.replace(/%.*$/, ''); // an IPv6 zone (`fe80::1%eth0`) names an interface, not a client
    const version = isIP(address);
    if (version === 4)
        return address;
    if (version === 0)
        return undefined;
    const g = hextets(address);
    if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff)
        return `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
    return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`;
}
//# sourceMappingURL=client_identity.js.map