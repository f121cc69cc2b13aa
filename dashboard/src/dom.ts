/** A tiny element builder: text always goes through textContent, so API data can never inject markup. */
export type Child = Node | string | number | null | undefined | false | Child[]
type Attrs = Record<string, unknown> | null | undefined

function append (el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue
    if (Array.isArray(c)) append(el, c)
    else el.append(c instanceof Node ? c : String(c))
  }
}

function setAttrs (el: Element, attrs: Attrs): void {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2).toLowerCase(), value as EventListener)
    else if (name === 'value' && 'value' in el) (el as HTMLInputElement).value = String(value)
    else el.setAttribute(name, value === true ? '' : String(value))
  }
}

export function h<K extends keyof HTMLElementTagNameMap> (tag: K, attrs?: Attrs, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  setAttrs(el, attrs)
  append(el, children)
  return el
}

const SVG_NS = 'http://www.w3.org/2000/svg'
export function svg (tag: string, attrs?: Attrs, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag)
  setAttrs(el, attrs)
  append(el, children)
  return el
}

export function formatTime (iso: string | undefined): string {
  if (iso === undefined || iso === null) return '—'
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })
}

export function timeEl (iso: string | undefined): HTMLElement {
  return iso === undefined ? h('span', null, '—') : h('time', { datetime: iso, title: iso }, formatTime(iso))
}

export function statusBadge (status: string): HTMLElement {
  return h('span', { class: `badge s-${status.replace(/[^a-z]/g, '')}` }, status)
}

/** A message whose next delivery attempt is overdue (the API's `stuck`): said in words, not by colour alone. */
export function stuckBadge (): HTMLElement {
  return h('span', { class: 'badge s-stuck', title: 'The next delivery attempt is overdue' }, 'Stuck')
}

/**
 * A table with a visually hidden caption, and a message when empty. Each cell carries its column's name
 * (`data-label`), which narrow screens show beside the value when the rows become cards (style.css).
 */
export function table (caption: string, headers: string[], rows: Child[][], empty: string, attrs: Attrs = null): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty)
  return h('table', { class: 'rows', ...attrs },
    h('caption', { class: 'sr-only' }, caption),
    h('thead', null, h('tr', null, headers.map((t) =>
      h('th', { scope: 'col' }, t === '' ? h('span', { class: 'sr-only' }, 'Actions') : t)))),
    h('tbody', null, rows.map((r) => h('tr', null, r.map((c, i) => h('td', { 'data-label': headers[i] ?? '' }, c))))))
}

/**
 * Copies `value` to the clipboard: the Clipboard API where the page is a secure context (HTTPS or localhost),
 * else by selecting `source` and the browser's copy command. Resolves whether it worked.
 */
export async function copyText (value: string, source: Element): Promise<boolean> {
  try {
    if (navigator.clipboard !== undefined) { await navigator.clipboard.writeText(value); return true }
  } catch { /* fall back to selecting the text */ }
  const range = document.createRange()
  range.selectNodeContents(source)
  const selection = window.getSelection()
  selection?.removeAllRanges()
  selection?.addRange(range)
  try { return document.execCommand('copy') } catch { return false }
}

/** A "Copy" button for `value`, named for what it copies; it says "Copied" for a moment (announced politely). */
export function copyButton (value: string, source: Element, what: string): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'small secondary copy', 'aria-label': `Copy ${what}` }, 'Copy')
  button.onclick = () => {
    void copyText(value, source).then((ok) => {
      button.textContent = ok ? 'Copied' : 'Select and copy'
      button.setAttribute('aria-label', ok ? `Copied ${what}` : `Copy ${what}`)
      window.setTimeout(() => { button.textContent = 'Copy'; button.setAttribute('aria-label', `Copy ${what}`) }, 2000)
    })
  }
  return button
}

/** Shows a secret value once, with a copy button. */
export function secretBox (label: string, value: string, testId: string): HTMLElement {
  const code = h('code', { 'data-testid': testId }, value)
  return h('div', { class: 'secret', role: 'status' },
    h('p', null, h('strong', null, label), ' This is the only time it is shown; store it now.'),
    code, ' ', copyButton(value, code, 'the value'))
}

/** Replaces an element's children (same child rules as `h`). */
export function fill (el: Element, ...children: Child[]): void {
  el.replaceChildren()
  append(el, children)
}

/**
 * Brings an action's outcome to the person who took it: focus moves to `el` (made focusable) and it is scrolled
 * into view, so a result shown beside a button low on a phone's page is neither off-screen nor missed by a reader.
 */
export function reveal (el: HTMLElement): void {
  if (!el.hasAttribute('tabindex')) el.setAttribute('tabindex', '-1')
  el.focus({ preventScroll: true })
  // taller than the screen: its beginning (heading, first lines) at the top
  el.scrollIntoView({ block: el.getBoundingClientRect().height > window.innerHeight ? 'start' : 'center' })
}

/**
 * Shows an action's result in `slot`, which the view places next to the form or button that caused it: a region
 * named `label`, focused and scrolled into view. Returns the region.
 */
export function showResult (slot: HTMLElement, label: string, ...children: Child[]): HTMLElement {
  const region = h('div', { class: 'result', role: 'region', 'aria-label': label, tabindex: '-1' })
  append(region, children)
  slot.replaceChildren(region)
  reveal(region)
  return region
}
