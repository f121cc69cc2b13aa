import type { GetTemplatesResponse } from '../../../client/src/mod.ts'
import { missingVariables, renderTemplate, templateVariables } from '../../../protocol/templates.ts'
import { h, table, timeEl } from '../dom.ts'
import { act } from '../errors.ts'
import type { ViewContext, ViewDef } from '../view.ts'
import { contentSrcdoc } from './message_content.ts'

type Template = GetTemplatesResponse['data'][number]
interface Fields { name: string, subject: string, html: string, text: string }

/**
 * The template form with a live preview: the same rendering the engine applies ({{var}} filled as text in the
 * subject and text part, HTML-escaped in the HTML part), with a value field for every placeholder. The HTML is
 * shown in a sandboxed frame, so nothing in it runs.
 */
function editor (initial: Fields, submitLabel: string, save: (f: Fields) => Promise<void>, slot: HTMLElement): HTMLElement {
  const input = (id: string, label: string, value: string, multiline: boolean): [HTMLElement, HTMLInputElement | HTMLTextAreaElement] => {
    const el = multiline ? h('textarea', { id, rows: 6 }) : h('input', { id, required: id !== 'tpl-text' })
    el.value = value
    return [h('label', { for: id }, label), el]
  }
  const [nameLabel, name] = input('tpl-name', 'Name', initial.name, false)
  const [subjectLabel, subject] = input('tpl-subject', 'Subject', initial.subject, false)
  const [htmlLabel, html] = input('tpl-html', 'HTML', initial.html, true)
  const [textLabel, text] = input('tpl-text', 'Text (optional)', initial.text, true)
  const values = new Map<string, HTMLInputElement>()
  const varsBox = h('fieldset', null, h('legend', null, 'Preview values'))
  const previewSubject = h('p', { 'data-testid': 'preview-subject' })
  const frame = h('iframe', { sandbox: '', title: 'HTML preview', class: 'preview', 'data-testid': 'preview-html' })
  const previewText = h('pre', { class: 'raw', 'data-testid': 'preview-text' })
  const previewMissing = h('p', { class: 'help', 'data-testid': 'preview-missing', role: 'status' })

  function refresh (): void {
    const tpl = { subject: subject.value, html: html.value, ...(text.value !== '' ? { text: text.value } : {}) }
    const names = templateVariables(tpl)
    for (const n of names) {
      if (values.has(n)) continue
      const id = `tpl-var-${values.size}`
      const field = h('input', { id, oninput: refresh })
      values.set(n, field)
      varsBox.append(h('label', { for: id }, n), field)
    }
    const given = Object.fromEntries([...values].filter(([, v]) => v.value !== '').map(([k, v]) => [k, v.value]))
    const rendered = renderTemplate(tpl, given)
    const missing = missingVariables(tpl, given)
    // The API's rule, shown where the values are typed: a send without one of these is refused.
    previewMissing.textContent = missing.length === 0
      ? 'Every placeholder has a value.'
      : `A send without ${missing.join(', ')} in "variables" is refused (422), unless it sets "allow_missing_variables": true.`
    previewSubject.textContent = rendered.subject
    // under the content view's policy: the preview fetches nothing, as the dashboard's own policy allows images
    frame.srcdoc = contentSrcdoc(rendered.html)
    previewText.textContent = rendered.text ?? '(no text part)'
  }
  for (const el of [subject, html, text]) el.addEventListener('input', refresh)
  refresh()
  const submit = h('button', { type: 'submit' }, submitLabel)
  return h('form', {
    class: 'card',
    onsubmit: (e: Event) => {
      e.preventDefault()
      void act(submit, slot, async () => { await save({ name: name.value, subject: subject.value, html: html.value, text: text.value }) })
    }
  }, nameLabel, name, subjectLabel, subject, htmlLabel, html, textLabel, text, submit,
  h('h2', null, 'Preview'), varsBox, previewMissing,
  h('h3', null, 'Subject'), previewSubject,
  h('h3', null, 'HTML'), frame,
  h('h3', null, 'Text'), previewText)
}

async function renderList (ctx: ViewContext): Promise<Node> {
  const client = ctx.session.client
  const slot = h('div')
  const page = await client.templates.list({ limit: 100 })
  const list = table('Templates', ['Name', 'Subject', 'Placeholders', 'Updated'], page.data.map((t: Template) => [
    h('a', { href: `#/templates/${encodeURIComponent(t.id)}` }, t.name), t.subject, templateVariables(t).join(', ') || '—',
    timeEl(t.updated_at ?? t.created_at)
  ]), 'No templates yet.')
  const form = editor({ name: '', subject: 'Hello {{name}}', html: '<p>Hello {{name}}</p>', text: '' }, 'Create template', async (f) => {
    const t = await client.templates.create({ name: f.name, subject: f.subject, html: f.html, ...(f.text !== '' ? { text: f.text } : {}) })
    location.hash = `#/templates/${encodeURIComponent(t.id)}`
  }, slot)
  return h('section', null, h('h1', null, 'Templates'),
    h('p', { class: 'help' }, 'Send with "template_id" and "variables"; each message keeps the text it was accepted with.'),
    list, h('h2', null, 'Create a template'), slot, form)
}

async function renderOne (ctx: ViewContext): Promise<Node> {
  const client = ctx.session.client
  const id = ctx.params[0]!
  const slot = h('div')
  const saved = h('p', { role: 'status', class: 'notice', hidden: true })
  const t = await client.templates.get(id)
  const form = editor({ name: t.name, subject: t.subject, html: t.html, text: t.text ?? '' }, 'Save', async (f) => {
    await client.templates.update(id, { name: f.name, subject: f.subject, html: f.html, ...(f.text !== '' ? { text: f.text } : {}) })
    saved.textContent = 'Saved.'
    saved.hidden = false
  }, slot)
  return h('section', null, h('p', null, h('a', { href: '#/templates' }, '← Templates')),
    h('h1', null, 'Template ', h('code', null, t.name)), slot, saved, form)
}

export const templatesView: ViewDef = { path: /^templates$/, title: 'Templates', nav: 'Templates', permission: 'manage', render: renderList }
export const templateView: ViewDef = { path: /^templates\/([^/]+)$/, title: 'Template', permission: 'manage', render: renderOne }
