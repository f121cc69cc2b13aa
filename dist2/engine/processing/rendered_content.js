import { renderContent } from '../../protocol/mod.js';
import { templateSource } from '../template_source.js';
/**
 * The subject, html and text the recipients get: a template message's copy rendered with its variables, any other
 * message's own. A delivery renders it once and hands the result to everything that needs it: the events' subject,
 * the sandbox's simulated click, the shard's thread that composes the MIME.
 */
export function renderedContent(msg) {
    const template = templateSource(msg);
    if (template !== undefined)
        return renderContent(template, msg.variables ?? {});
    const own = { subject: msg.subject };
    if (msg.html !== undefined)
        own.html = msg.html;
    if (msg.text !== undefined)
        own.text = msg.text;
    return own;
}
/**
 * The message as the shard's thread composes it: the rendered content in place of its own subject, html and text,
 * so the thread never renders (a part the rendering lacks stays absent).
 */
export function withContent(msg, content) {
    const { html: _html, text: _text, ...rest } = msg;
    const out = { ...rest, subject: content.subject };
    if (content.html !== undefined)
        out.html = content.html;
    if (content.text !== undefined)
        out.text = content.text;
    return out;
}
//# sourceMappingURL=rendered_content.js.map