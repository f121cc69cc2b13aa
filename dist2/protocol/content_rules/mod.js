import { scanHtml } from './html_scan.js';
import { RULES, hostOf } from './rules.js';
export { scanHtml } from './html_scan.js';
export { HTML_LIMITS, parseHtmlWithin } from './html_limits.js';
export { RULES, SPAM_PHRASES, URL_SHORTENERS, RISKY_EXTENSIONS } from './rules.js';
/** Verdict thresholds on the 0–10 score (lower is better). */
export const PASS_BELOW = 3;
export const WARN_BELOW = 6;
export const MAX_SCORE = 10;
function emptyScan() {
    return { text: '', hiddenTextChars: 0, images: 0, links: [], activeContent: [], unclosed: 0 };
}
export function verdictOf(score) {
    return score < PASS_BELOW ? 'pass' : score < WARN_BELOW ? 'warn' : 'fail';
}
/**
 * Scores content with the rule table: each rule that fires adds its weight; the sum is capped at 10 and rounded
 * to one decimal. Pure and synchronous: the analyze endpoint and inbound spam scoring share it.
 */
export function analyzeContent(input) {
    const parsed = scanHtml(input.html);
    // A partial parse says nothing reliable about the rest of the document: judge as if there were no HTML to read.
    const scan = parsed.stoppedAt === undefined ? parsed : { ...emptyScan(), stoppedAt: parsed.stoppedAt };
    const text = input.text ?? '';
    const linkHosts = [];
    for (const l of scan.links) {
        const h = hostOf(l.href);
        if (h !== undefined)
            linkHosts.push(h);
    }
    const ctx = {
        subject: input.subject,
        html: input.html,
        text,
        ...(input.from !== undefined ? { from: input.from } : {}),
        attachments: input.attachments ?? [],
        scan,
        body: scan.text !== '' ? scan.text : text,
        linkHosts
    };
    const checks = [];
    let total = 0;
    for (const rule of RULES) {
        const message = rule.check(ctx);
        if (message === undefined)
            continue;
        checks.push({ id: rule.id, severity: rule.severity, message });
        total += rule.weight;
    }
    const score = Math.min(MAX_SCORE, Math.round(total * 10) / 10);
    return { score, verdict: verdictOf(score), checks, content_analysis: scan.stoppedAt === undefined ? 'complete' : 'skipped' };
}
//# sourceMappingURL=mod.js.map