import './style.css'
import { fill, h } from './dom.ts'
import { errorBox } from './errors.ts'
import { LiveFeed } from './live.ts'
import { signIn, signOut, storedKey, type Session } from './session.ts'
import type { ViewDef } from './view.ts'
import { signInView } from './views/sign_in.ts'
import { activityView } from './views/activity.ts'
import { messageView } from './views/message.ts'
import { statsView } from './views/stats.ts'
import { webhooksView, webhookView } from './views/webhooks.ts'
import { keysView } from './views/keys.ts'
import { domainsView } from './views/domains.ts'
import { inboundView } from './views/inbound.ts'
import { suppressionsView } from './views/suppressions.ts'

const VIEWS: ViewDef[] = [activityView, messageView, statsView, webhooksView, webhookView, keysView, domainsView, inboundView, suppressionsView]

const main = document.getElementById('main')!
const nav = document.getElementById('nav')!
const who = document.getElementById('who')!
let session: Session | undefined
let live: LiveFeed | undefined
let leave: Array<() => void> = []
/** Increases with every navigation, so a slow view that finishes after the user moved on is dropped. */
let generation = 0

function landing (s: Session): string {
  return s.can('read') ? '#/activity' : '#/keys'
}

function renderChrome (s: Session): void {
  const current = location.hash.split('/')[1] ?? ''
  nav.replaceChildren(h('ul', null, VIEWS.filter((v) => v.nav !== undefined && s.can(v.permission)).map((v) => {
    const href = '#/' + v.path.source.replace(/^\^|\$$/g, '')
    return h('li', null, h('a', { href, 'aria-current': href.split('/')[1] === current ? 'page' : undefined }, v.nav!))
  })))
  const liveState = h('span', { class: 'live', 'data-testid': 'live-state', role: 'status' }, 'connecting…')
  const unsubscribe = live?.onState((state) => { liveState.textContent = state === 'live' ? '● live' : state === 'connecting' ? 'connecting…' : 'offline'; liveState.dataset.state = state })
  if (unsubscribe !== undefined) leave.push(unsubscribe)
  fill(who,
    h('span', { class: 'key-name', 'data-testid': 'whoami' }, `${s.me.key_name} · ${s.me.domain} · ${s.me.permissions.join(', ')}`),
    s.me.environment === 'test' && h('span', { class: 'badge s-test' }, 'sandbox'),
    s.can('read') && liveState,
    h('button', { type: 'button', class: 'small', onclick: () => { signOut(); live?.stop(); session = undefined; live = undefined; location.hash = '#/'; void route() } }, 'Sign out'))
}

async function route (): Promise<void> {
  const current = ++generation
  for (const fn of leave) fn()
  leave = []
  if (session === undefined) {
    nav.replaceChildren()
    who.replaceChildren()
    main.replaceChildren(signInView(async (key) => {
      session = await signIn(key)
      start(session)
      location.hash = landing(session)
      await route()
    }))
    return
  }
  const s = session
  const path = location.hash.replace(/^#\/?/, '')
  renderChrome(s)
  if (path === '') { location.hash = landing(s); return }
  const view = VIEWS.find((v) => v.path.test(path))
  if (view === undefined) { main.replaceChildren(h('h1', null, 'Not found'), h('p', null, 'No such page. ', h('a', { href: landing(s) }, 'Go back.'))); return }
  document.title = `${view.title} · Outbox`
  if (!s.can(view.permission)) {
    main.replaceChildren(h('h1', null, view.title), h('p', { class: 'notice' }, `This API key lacks the ${view.permission} permission needed for this page.`))
    return
  }
  const params = view.path.exec(path)!.slice(1).map(decodeURIComponent)
  main.replaceChildren(h('p', { class: 'loading', 'aria-busy': 'true' }, 'Loading…'))
  const cleanups: Array<() => void> = []
  leave.push(() => { for (const fn of cleanups) fn() })
  try {
    const node = await view.render({ session: s, live: live!, params, onLeave: (fn) => cleanups.push(fn) })
    if (current !== generation) { for (const fn of cleanups) fn(); return }
    main.replaceChildren(node)
  } catch (err) {
    if (current === generation) main.replaceChildren(h('h1', null, view.title), errorBox(err))
  }
}

function start (s: Session): void {
  live = new LiveFeed(s.key)
  if (s.can('read')) live.start()
}

async function boot (): Promise<void> {
  const key = storedKey()
  if (key !== null) {
    try { session = await signIn(key); start(session) } catch { signOut() }
  }
  window.addEventListener('hashchange', () => { void route() })
  await route()
}

void boot()
