/**
 * The text a message naming a template is rendered from, with its `variables`: the copy of the template's subject,
 * html and text the gateway put into the message when it accepted it (the request's own subject in place of the
 * template's). The queued message schema requires that copy, so the message goes out as accepted whatever happens
 * to the template afterwards, and the engine never reads a template. Undefined: no template.
 */
export function templateSource(msg) {
    if (msg.template_id === undefined)
        return undefined;
    const copy = { subject: msg.subject };
    if (msg.html !== undefined)
        copy.html = msg.html;
    if (msg.text !== undefined)
        copy.text = msg.text;
    return copy;
}
//# sourceMappingURL=template_source.js.map