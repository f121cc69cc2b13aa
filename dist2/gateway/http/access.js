import { ApiError } from '../../protocol/mod.js';
/**
 * Looks up an org-owned record by id: 404 when no organisation has it, 403 when another one does
 * (decisions: a resource of another organisation is `forbidden`).
 */
export function ownedRecord(mirror, orgId, id, what) {
    const record = mirror.getBy('id', id);
    if (record === undefined)
        throw new ApiError('not_found', `No ${what} with id ${id}.`);
    if (record.org_id !== orgId)
        throw new ApiError('forbidden', `The ${what} ${id} belongs to another organisation.`);
    return record;
}
//# sourceMappingURL=access.js.map