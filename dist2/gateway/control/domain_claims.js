import { ApiError } from '../../protocol/mod.js';
import { KvConflictError } from '../../stores/control_plane/mod.js';
function claimKey(d) {
    return `${d.org_id}.${d.id}`;
}
/**
 * Derived on every read rather than stored, so it is right whichever process verified the owner and it needs
 * no second write: a pending claim lapses while another claim holds the name, and is pending again if the owner
 * deletes its domain (it can still verify only with its own key published).
 */
export function claimStatus(cp, d) {
    if (d.status === 'verified')
        return 'verified';
    const owner = cp.domainOwner(d.name);
    return owner !== undefined && owner.id !== d.id ? 'lapsed' : 'pending';
}
export function verifiedElsewhere(name, field, orgId) {
    const who = orgId === undefined ? 'an organisation' : 'this organisation';
    return new ApiError('conflict', `The domain ${name} is already verified by ${who}.`, { field });
}
export function lapsedClaim(d) {
    return new ApiError('conflict', `The domain ${d.name} was verified by another organisation first; this claim has lapsed and can be deleted.`, {
        details: { domain_id: d.id, status: 'lapsed' }
    });
}
/**
 * A name entry whose claim is still pending after this long was left by a verify that stopped between its two
 * writes, or by a pending domain stored before claims were introduced; a younger one is a verify in progress.
 */
const STALE_NAME_ENTRY_MS = 60_000; // 60 s
/**
 * Makes `d` the owner of its name, before it is marked verified (a verified record always owns its name). The
 * entry is created, or taken over by compare-and-set from a claim that is gone or stale, so of two racing
 * verifies exactly one wins. A name verified by another claim is 409, as is one being verified right now.
 */
export async function takeDomainName(cp, d, field = 'name') {
    const key = claimKey(d);
    for (let attempt = 0; attempt < 5; attempt++) {
        const entry = await cp.domainNames.kv.get(d.name);
        const holder = entry === null || entry.operation !== 'PUT' ? undefined : entry.json();
        if (holder === key)
            return;
        const held = holder === undefined ? undefined : cp.domains.get(holder);
        if (held?.status === 'verified')
            throw verifiedElsewhere(d.name, field, held.org_id === d.org_id ? d.org_id : undefined);
        if (held !== undefined && Date.now() - entry.created.getTime() < STALE_NAME_ENTRY_MS) {
            throw new ApiError('conflict', `The domain ${d.name} is being verified by another claim right now.`, { field });
        }
        try {
            if (holder === undefined)
                await cp.domainNames.create(d.name, key);
            else
                await cp.domainNames.update(d.name, key, entry.revision);
            return;
        }
        catch (err) {
            if (!(err instanceof KvConflictError))
                throw err;
        }
    }
    throw verifiedElsewhere(d.name, field);
}
/** Frees the name when `d` holds it; other claims on it become pending again. */
export async function releaseDomainName(cp, d) {
    if (cp.domainNames.get(d.name) === claimKey(d))
        await cp.domainNames.delete(d.name);
}
//# sourceMappingURL=domain_claims.js.map