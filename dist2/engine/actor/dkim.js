import { createHash, sign } from 'node:crypto';
import tools from 'mailauth/lib/tools.js';
import header from 'mailauth/lib/dkim/header/index.js';
import body from 'mailauth/lib/dkim/body/relaxed.js';
/**
 * The header fields the signature covers: the RFC 6376 §5.4 list plus `List-Unsubscribe-Post`, which RFC 8058 §4
 * requires to be signed along with `List-Unsubscribe`; without it a receiver may ignore the one-click unsubscribe.
 */
export const DKIM_SIGNED_HEADERS = [
    'From', 'Sender', 'Reply-To', 'Subject', 'Date', 'Message-ID', 'To', 'Cc', 'MIME-Version', 'Content-Type',
    'Content-Transfer-Encoding', 'Content-ID', 'Content-Description', 'Resent-Date', 'Resent-From', 'Resent-Sender',
    'Resent-To', 'Resent-Cc', 'Resent-Message-ID', 'In-Reply-To', 'References', 'List-Id', 'List-Help',
    'List-Unsubscribe', 'List-Unsubscribe-Post', 'List-Subscribe', 'List-Post', 'List-Owner', 'List-Archive'
].join(':');
/** The relaxed SHA-256 body hash (`bh=`) of a body given in pieces, in order. */
export function dkimBodyHash(pieces) {
    const hash = new body.RelaxedHash('sha256');
    for (const p of pieces)
        hash.update(p);
    return hash.digest('base64');
}
/** The `DKIM-Signature` header lines (each ending CRLF) for the header block `head` and the body's hash. */
export function dkimSignatures(keys, head, bodyHash) {
    const lines = tools.getSigningHeaderLines(tools.parseHeaders(head).parsed, DKIM_SIGNED_HEADERS);
    // one time for the signed copy and the written copy of the header
    const signTime = new Date();
    let out = '';
    for (const k of keys) {
        const ed25519 = k.key.asymmetricKeyType === 'ed25519';
        const { canonicalizedHeader, dkimHeaderOpts } = header.generateCanonicalizedHeader('DKIM', lines, {
            signingDomain: k.domain,
            selector: k.selector,
            algorithm: ed25519 ? 'ed25519-sha256' : 'rsa-sha256',
            canonicalization: 'relaxed/relaxed',
            bodyHash,
            signTime
        });
        // RFC 8463 §3: Ed25519 signs the SHA-256 of the canonical header, RSA hashes it itself
        const signature = ed25519
            ? sign(null, createHash('sha256').update(canonicalizedHeader).digest(), k.key)
            : sign('sha256', canonicalizedHeader, k.key);
        dkimHeaderOpts.b = signature.toString('base64');
        out += tools.formatSignatureHeaderLine('DKIM', dkimHeaderOpts, true) + '\r\n';
    }
    return out;
}
//# sourceMappingURL=dkim.js.map