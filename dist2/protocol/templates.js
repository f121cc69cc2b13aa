const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*\}\}/g;
const HTML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(value) {
    return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}
function lookup(variables, name) {
    let value = Object.hasOwn(variables, name) ? variables[name] : undefined;
    if (value === undefined && name.includes('.')) {
        value = variables;
        for (const part of name.split('.')) {
            if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) {
                value = undefined;
                break;
            }
            value = value[part];
        }
    }
    if (value === undefined || value === null || typeof value === 'object' || typeof value === 'function')
        return '';
    return String(value);
}
function fill(source, variables, encode) {
    return source.replace(PLACEHOLDER, (_m, name) => encode(lookup(variables, name)));
}
export function renderContent(content, variables = {}) {
    const out = { subject: fill(content.subject, variables, (v) => v.replace(/[\r\n]+/g, ' ')) };
    if (content.html !== undefined)
        out.html = fill(content.html, variables, escapeHtml);
    if (content.text !== undefined)
        out.text = fill(content.text, variables, (v) => v);
    return out;
}
export function renderTemplate(tpl, variables = {}) {
    // a template always has html, so its rendering has too
    return renderContent(tpl, variables);
}
/** The distinct placeholder names a template uses, in order of first appearance. */
export function templateVariables(tpl) {
    const names = new Set();
    for (const source of [tpl.subject, tpl.html, tpl.text ?? ''])
        for (const m of source.matchAll(PLACEHOLDER))
            names.add(m[1]);
    return [...names];
}
//# sourceMappingURL=templates.js.map