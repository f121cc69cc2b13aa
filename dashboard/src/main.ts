import './style.css'
import { fill, h } from './dom.ts'
import { errorBox } from './errors.ts'
import { LiveFeed } from './live.ts'
import { keyRefused, signIn, signOut, storedKey, transient, type Session } from './session.ts'
import type { ViewDef } from './view.ts'
import { signInView } from './views/sign_in.ts'
import { activityView } from './views/activity.ts'
import { messageView } from './views/message.ts'
import { statsView } from './views/stats.ts'
import { webhooksView, webhookView } from './views/webhooks.ts'
import { keysView } from './views/keys.ts'
import { domainsView } from './views/domains.ts'
import { domainDmarcView } from './views/domain_dmarc.ts'
import { inboundView } from './views/inbound.ts'
import { suppressionsView } from './views/suppressions.ts'
import { reconnectingView } from './views/reconnecting.ts'
import { templatesView, templateView } from './views/templates.ts'
import { egressView } from './views/egress.ts'
import { auditLogView } from './views/audit_log.ts'
import { streamsView } from './views/streams.ts'

const VIEWS: ViewDef[] = [
  activityView, messageView, statsView, webhooksView, webhookView, keysView, templatesView, templateView, domainsView, inboundView,
  suppressionsView, streamsView, egressView, domainDmarcView, auditLogView
]

const main = document.getElementById('main')!
const nav = document.getElementById('nav')!
const who = document.getElementById('who')!
let session: Session | undefined
let live: LiveFeed | undefined
let leave: Array<() => void> = []
/** Increases with every navigation, so a slow view that finishes after the user moved on is dropped. */
let generation = 0
/** Set by a navigation the user made (link, back, sign-in), after which focus moves to the new view's heading. */
let navigated = false
/** The route shown, restored when the skip link's own `#main` lands in the address bar. */
let shownHash = ''

/** Moves focus to the view's heading, so keyboard and screen-reader users start reading the new page there. */
function focusView (): void {
  if (!navigated) return
  navigated = false
  const heading = main.querySelector('h1')
  if (heading === null) { main.focus(); return }
  heading.tabIndex = -1
  heading.focus()
}

async function navigate (): Promise<void> {
  navigated = true
  await route()
}

function landing (s: Session): string {
  if (s.operator) return '#/egress'
  return s.can('read') ? '#/activity' : '#/keys'
}

/** Why the key may not open a view: an operator key sees only the operator views, organisation keys never see them. */
function refusal (s: Session, view: ViewDef): string {
  if (s.operator) return 'An operator key belongs to no organisation: it opens the operator views only.'
  if (view.permission === 'operator') return 'This page needs an operator key (ob_op_…); organisation keys, admin included, cannot open it.'
  return `This API key lacks the ${view.permission} permission needed for this page.`
}

function renderChrome (s: Session): void {
  const current = (location.hash.split('/')[1] ?? '').split('?')[0]
  nav.replaceChildren(h('ul', null, VIEWS.filter((v) => v.nav !== undefined && s.can(v.permission)).map((v) => {
    const href = '#/' + v.path.source.replace(/^\^|\$$/g, '')
    return h('li', null, h('a', { href, 'aria-current': href.split('/')[1] === current ? 'page' : undefined }, v.nav!))
  })))
  const liveState = h('span', { class: 'live', 'data-testid': 'live-state', role: 'status' }, 'connecting…')
  const unsubscribe = live?.onState((state) => {
    liveState.textContent = state === 'live' ? '● live' : state === 'connecting' ? 'connecting…' : 'offline'
    liveState.dataset.state = state
  })
  if (unsubscribe !== undefined) leave.push(unsubscribe)
  document.querySelector<HTMLAnchorElement>('a.brand')?.setAttribute('href', landing(s))
  fill(who,
    h('span', { class: 'key-name', 'data-testid': 'whoami' },
      s.operator ? s.me.key_name : `${s.me.key_name} · ${s.me.domain} · ${s.me.permissions.join(', ')}`),
    s.operator && h('span', { class: 'badge s-operator' }, 'operator'),
    s.me.environment === 'test' && h('span', { class: 'badge s-test' }, 'sandbox'),
    s.can('read') && liveState,
    h('button', {
      type: 'button',
      class: 'small',
      onclick: () => { signOut(); live?.stop(); session = undefined; live = undefined; location.hash = '#/'; void navigate() }
    }, 'Sign out'))
}

/** After the signed-in key was rotated: the session continues with the new value, and so does the live feed. */
async function switchKey (key: string): Promise<void> {
  const next = await signIn(key)
  live?.stop()
  Object.assign(session!, next)
  start(session!)
  renderChrome(session!)
}

async function route (): Promise<void> {
  if (location.hash === '#main') {
    // The skip link without script: stay on the page shown and go to its content.
    history.replaceState(null, '', shownHash === '' ? location.pathname : shownHash)
    main.focus()
    return
  }
  shownHash = location.hash
  const current = ++generation
  for (const fn of leave) fn()
  leave = []
  if (session === undefined) {
    nav.replaceChildren()
    who.replaceChildren()
    document.querySelector<HTMLAnchorElement>('a.brand')?.setAttribute('href', '#/activity')
    main.replaceChildren(signInView(async (key) => {
      session = await signIn(key)
      start(session)
      navigated = true
      if (location.hash === landing(session)) await route()
      else location.hash = landing(session)
    }))
    return
  }
  const s = session
  const [path = '', search = ''] = location.hash.replace(/^#\/?/, '').split('?')
  renderChrome(s)
  if (path === '') { location.hash = landing(s); return }
  const view = VIEWS.find((v) => v.path.test(path))
  if (view === undefined) {
    main.replaceChildren(h('h1', null, 'Not found'), h('p', null, 'No such page. ', h('a', { href: landing(s) }, 'Go back.')))
    focusView()
    return
  }
  document.title = `${view.title} · Outbox`
  if (!s.can(view.permission)) {
    main.replaceChildren(h('h1', null, view.title), h('p', { class: 'notice' }, refusal(s, view)))
    focusView()
    return
  }
  const params = view.path.exec(path)!.slice(1).map(decodeURIComponent)
  main.replaceChildren(h('p', { class: 'loading', 'aria-busy': 'true' }, 'Loading…'))
  const cleanups: Array<() => void> = []
  leave.push(() => { for (const fn of cleanups) fn() })
  try {
    const setQuery = (q: URLSearchParams): void => {
      const hash = `#/${path}${q.toString() !== '' ? `?${q.toString()}` : ''}`
      if (hash === location.hash || current !== generation) return
      // pushState fires no hashchange, so the view stays; back and forward to it do fire one, and render it anew.
      history.pushState(null, '', hash)
      shownHash = hash
    }
    const node = await view.render({
      session: s, live: live!, params, query: new URLSearchParams(search), setQuery, onLeave: (fn) => cleanups.push(fn), switchKey
    })
    if (current !== generation) { for (const fn of cleanups) fn(); return }
    main.replaceChildren(node)
  } catch (err) {
    if (current === generation) main.replaceChildren(h('h1', null, view.title), errorBox(err))
  }
  if (current === generation) focusView()
}

function start (s: Session): void {
  live = new LiveFeed(s.key)
  if (s.can('read')) live.start()
}

const sleep = async (ms: number, wake: { now?: () => void }): Promise<void> => {
  await new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms)
    wake.now = () => { clearTimeout(t); resolve() }
  })
}

/**
 * Signs in again with the key kept in sessionStorage. Only a 401 (the key itself refused) forgets it; anything
 * else (no answer, 5xx, 429) shows "Reconnecting…" and tries again after 1, 2, 4 … up to 30 seconds.
 * Resolves true when signed in, false when the user is signed out.
 */
async function resume (key: string): Promise<boolean> {
  const wake: { now?: () => void } = {}
  let gaveUp = false
  const quit = (): void => { gaveUp = true; signOut(); wake.now?.() }
  for (let attempt = 1; ; attempt++) {
    try {
      session = await signIn(key)
      start(session)
      return true
    } catch (err) {
      if (gaveUp) return false
      if (keyRefused(err)) { signOut(); return false }
      const delay = transient(err) ? Math.min(30_000, 1000 * 2 ** (attempt - 1)) : undefined
      const nextAt = delay === undefined ? undefined : Date.now() + delay
      main.replaceChildren(reconnectingView({ attempt, error: err, nextAt }, () => wake.now?.(), quit))
      await sleep(delay ?? 2 ** 31 - 1, wake)
      if (gaveUp) return false
    }
  }
}

async function boot (): Promise<void> {
  const key = storedKey()
  if (key !== null) await resume(key)
  window.addEventListener('hashchange', () => { void navigate() })
  document.querySelector<HTMLAnchorElement>('a.skip')?.addEventListener('click', (e) => {
    // The route lives in the hash, so following `#main` would navigate away: move focus instead.
    e.preventDefault()
    main.focus()
  })
  await route()
}

void boot()
