import { isIP } from 'node:net';
/**
 * Parses a comma-separated CIDR list. Returns the ranges, or the first entry that is not a range, so the
 * configuration error can quote it.
 */
export function parseCidrList(list) {
    const ranges = [];
    for (const raw of list.split(',')) {
        const entry = raw.trim();
        const slash = entry.indexOf('/');
        const address = slash === -1 ? entry : entry.slice(0, slash);
        const version = isIP(address);
        if (version === 0)
            return { bad: entry };
        const max = version === 4 ? 32 : 128;
        const prefixText = slash === -1 ? String(max) : entry.slice(slash + 1);
        if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max)
            return { bad: entry };
        ranges.push({ address, prefix: Number(prefixText), family: version === 4 ? 'ipv4' : 'ipv6' });
    }
    return { ranges };
}
//# sourceMappingURL=cidr.js.map