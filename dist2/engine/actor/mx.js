import { Resolver } from 'node:dns/promises';
import { isBlockedAddress, isLocalhostName } from '../../protocol/mod.js';
import { NO_MAIL_HOST, NON_PUBLIC_MAIL_HOST, NULL_MX } from './classify.js';
export class MxLookupError extends Error {
    code;
    constructor(code, message, opts) {
        super(message, opts);
        this.code = code;
        this.name = 'MxLookupError';
    }
}
const CACHE_MS = 60_000; // 1 min: short enough to follow MX changes, long enough to spare the resolver
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA']);
function isNotFound(err) {
    return NOT_FOUND.has(err.code ?? '');
}
export class MxResolver {
    allowPrivate;
    resolver = new Resolver({ timeout: 5000, tries: 2 });
    cache = new Map();
    constructor(servers, allowPrivate) {
        this.allowPrivate = allowPrivate;
        if (servers.length > 0)
            this.resolver.setServers([...servers]);
    }
    /**
     * The mail hosts of `domain` that have an address, most preferred first (at least one);
     * throws MxLookupError (`ENOMAILHOST`, `ENULLMX`, `ENONPUBLICMAILHOST` or `EDNS`).
     */
    async route(domain) {
        const hit = this.cache.get(domain);
        if (hit !== undefined && Date.now() - hit.at < CACHE_MS) {
            if (hit.error !== undefined)
                throw hit.error;
            return hit.hosts;
        }
        try {
            const hosts = await this.lookup(domain);
            this.cache.set(domain, { at: Date.now(), hosts });
            return hosts;
        }
        catch (err) {
            // only definite answers are cached; a timed-out resolver is asked again next time
            if (err instanceof MxLookupError && err.code !== 'EDNS')
                this.cache.set(domain, { at: Date.now(), error: err });
            throw err;
        }
    }
    async lookup(domain) {
        let names;
        try {
            const mx = await this.resolver.resolveMx(domain);
            if (mx.length === 1 && (mx[0].exchange === '' || mx[0].exchange === '.'))
                throw new MxLookupError(NULL_MX, `${domain} accepts no mail (null MX)`);
            names = mx.sort((a, b) => a.priority - b.priority).map((r) => r.exchange);
        }
        catch (err) {
            if (err instanceof MxLookupError)
                throw err;
            if (!isNotFound(err))
                throw new MxLookupError('EDNS', `MX look-up for ${domain} failed: ${err.message}`, { cause: err });
            names = [domain];
        }
        const hosts = [];
        let lastError;
        /** The first host left out for its address, for the bounce's reason when no host is left. */
        let refused;
        for (const host of names) {
            if (!this.allowPrivate && isLocalhostName(host)) {
                refused ??= { host, address: 'loopback' };
                continue;
            }
            try {
                const ips = await this.resolver.resolve4(host);
                // one non-public address refuses the host, as for webhook targets: a mixed answer is not one we can reason about
                const blocked = this.allowPrivate ? undefined : ips.find(isBlockedAddress);
                if (blocked !== undefined)
                    refused ??= { host, address: blocked };
                else if (ips.length > 0)
                    hosts.push({ host, ip: ips[0] });
            }
            catch (err) {
                lastError = err;
            }
        }
        if (hosts.length > 0)
            return hosts;
        const lookupFailed = lastError !== undefined && !isNotFound(lastError);
        // a host that could not be looked up now may be a public one later: that waits (EDNS), a refusal does not
        if (refused !== undefined && !lookupFailed) {
            throw new MxLookupError(NON_PUBLIC_MAIL_HOST, `mail host ${refused.host} of ${domain} is at ${refused.address}, ` +
                'not a public address; delivery to loopback, private and link-local addresses is refused');
        }
        if (!lookupFailed)
            throw new MxLookupError(NO_MAIL_HOST, `${domain} has no mail host (no MX or A record)`);
        throw new MxLookupError('EDNS', `address look-up for the mail hosts of ${domain} failed: ${lastError.message}`, { cause: lastError });
    }
}
//# sourceMappingURL=mx.js.map