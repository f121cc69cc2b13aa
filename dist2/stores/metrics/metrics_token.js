import { createHash, timingSafeEqual } from 'node:crypto';
/**
 * Whether an `Authorization` header value may read `/metrics`: always when no token is configured, else only
 * `Bearer <token>` (the scheme in any case). Both sides are hashed first, so the comparison takes the same time
 * whatever the presented value's length or content.
 */
export function metricsAuthorized(authorization, token) {
    if (token === undefined)
        return true;
    const m = /^bearer +(\S+)$/i.exec(authorization?.trim() ?? '');
    if (m === null)
        return false;
    const digest = (s) => createHash('sha256').update(s).digest();
    return timingSafeEqual(digest(m[1]), digest(token));
}
//# sourceMappingURL=metrics_token.js.map