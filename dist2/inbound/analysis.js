import { simpleParser } from 'mailparser';
import { analyzeContent, scanHtml } from '../protocol/mod.js';
import { checkAuthentication } from './authenticate.js';
import { readReport } from './reports.js';
function headerMap(parsed) {
    const out = {};
    for (const h of parsed.headerLines) {
        const colon = h.line.indexOf(':');
        const value = h.line.slice(colon + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
        // Repeated headers (Received) are kept in order, one per line.
        out[h.key] = out[h.key] === undefined ? value : `${out[h.key]}\n${value}`;
    }
    return out;
}
function addressText(a) {
    if (a === undefined)
        return '';
    return (Array.isArray(a) ? a : [a]).map((x) => x.text).join(', ');
}
export async function analyzeMessage(req, resolver, mta) {
    const raw = Buffer.from(req.raw.buffer, req.raw.byteOffset, req.raw.byteLength);
    // textAsHtml is not part of the payload, and its linkify pass costs more than the rest of the parse.
    const options = { keepDeliveryStatus: true, skipTextLinks: true, skipTextToHtml: true };
    // mailparser turns an HTML-only body into text with html-to-text, whose parse takes time growing with nesting
    // depth × elements and has no limit of its own. The first parse leaves that out; the HTML is then measured
    // against HTML_LIMITS, and only HTML within them is parsed again for its text. Past them the text stays empty.
    let parsed = await simpleParser(raw, { ...options, skipHtmlToText: true });
    const html = typeof parsed.html === 'string' ? parsed.html : '';
    if (html !== '' && (parsed.text ?? '') === '' && scanHtml(html).stoppedAt === undefined) {
        parsed = await simpleParser(raw, options);
    }
    const out = {
        from: addressText(parsed.from),
        subject: parsed.subject ?? '',
        text: parsed.text ?? '',
        html,
        headers: headerMap(parsed),
        attachments: parsed.attachments.map((a) => ({
            filename: a.filename ?? '',
            content_type: a.contentType,
            size: a.size,
            ...(req.withContent ? { content: a.content.toString('base64') } : {})
        }))
    };
    if (req.reports) {
        const report = await readReport(parsed);
        if (report !== undefined)
            out.report = report;
    }
    if (req.routed) {
        // A failure inside the checks (a malformed signature header, a resolver error) is a temporary error of the
        // check, not of the message: the mail is still delivered to the route, marked temperror.
        out.authentication = await checkAuthentication(raw, req.job, resolver, mta)
            .catch(() => ({ spf: 'temperror', dkim: 'temperror', dmarc: 'temperror' }));
        const content = analyzeContent({
            subject: out.subject, html, text: out.text, from: out.from, attachments: out.attachments
        });
        out.spamScore = content.score;
        out.contentAnalysis = content.content_analysis;
    }
    return out;
}
//# sourceMappingURL=analysis.js.map