import type { ControlPlane } from '../stores/control_plane/mod.ts'
import type { QueuedMessage, MessageContent } from '../protocol/mod.ts'

/**
 * The text a message naming a template is rendered from, with its `variables`. The gateway copies the template's
 * subject, html and text into the message when it accepts it (the request's own subject in place of the
 * template's), so the message goes out as accepted whatever happens to the template afterwards. A message that
 * names a template but carries no body was queued without that copy: it is rendered from the template as it is
 * now, as such messages always were, and fails when the template is gone (null). Undefined: no template.
 */
export function templateSource (msg: QueuedMessage, cp: ControlPlane): MessageContent | null | undefined {
  if (msg.template_id === undefined) return undefined
  if (msg.html !== undefined || msg.text !== undefined) {
    const copy: MessageContent = { subject: msg.subject }
    if (msg.html !== undefined) copy.html = msg.html
    if (msg.text !== undefined) copy.text = msg.text
    return copy
  }
  const live = cp.templates.get(`${msg.org_id}.${msg.template_id}`)
  if (live === undefined) return null
  const content: MessageContent = { subject: live.subject, html: live.html }
  if (live.text !== undefined) content.text = live.text
  return content
}
