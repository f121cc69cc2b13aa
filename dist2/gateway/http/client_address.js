import { BlockList, isIP } from 'node:net';
import { clientIdentity } from '../../protocol/mod.js';
/** Hops of `X-Forwarded-For` looked at, from the right; a chain of proxies longer than this is not a real set-up. */
const MAX_HOPS = 16;
/**
 * The client a request is counted under. The socket's peer, unless the peer is a trusted proxy: then
 * `X-Forwarded-For` is read from the right (each proxy appends the address it received from), skipping trusted
 * proxies, and the first address that is not one is the client. What a client wrote to the left of that is never
 * read, so a client cannot choose what it is counted under. An entry that is not an IP address stops the walk at
 * the proxy that wrote it. The result is a `clientIdentity`.
 */
export class ClientAddresses {
    trusted;
    constructor(ranges) {
        if (ranges.length === 0)
            return;
        this.trusted = new BlockList();
        for (const r of ranges)
            this.trusted.addSubnet(r.address, r.prefix, r.family);
    }
    /** True when `X-Forwarded-For` can matter; when false the caller need not read the header at all. */
    get readsForwardedFor() {
        return this.trusted !== undefined;
    }
    /** `peer`: the socket's address as text; `forwardedFor`: the header's value, '' when absent. */
    of(peer, forwardedFor) {
        return clientIdentity(this.client(peer, forwardedFor)) ?? peer;
    }
    client(peer, forwardedFor) {
        if (this.trusted === undefined || forwardedFor === '' || !this.isTrusted(peer))
            return peer;
        let client = peer;
        const hops = forwardedFor.split(',');
        for (let i = hops.length - 1; i >= Math.max(0, hops.length - MAX_HOPS); i--) {
            const hop = hops[i].trim();
            if (isIP(hop) === 0)
                return client;
            client = hop;
            if (!this.isTrusted(hop))
                return client;
        }
        return client;
    }
    /** BlockList matches IPv4 ranges against IPv4-mapped IPv6 addresses too. */
    isTrusted(address) {
        const version = isIP(address);
        return version !== 0 && this.trusted.check(address, version === 4 ? 'ipv4' : 'ipv6');
    }
}
//# sourceMappingURL=client_address.js.map