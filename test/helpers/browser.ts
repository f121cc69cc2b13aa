import { existsSync, mkdirSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'

export const CHROMIUM_PATH = '/usr/bin/chromium'
const ROOT = new URL('../../../', import.meta.url)

/** Why the browser tests cannot run here, or undefined when they can. */
export function browserMissing (): string | undefined {
  if (!existsSync(CHROMIUM_PATH)) return `${CHROMIUM_PATH} not found: apt-get install -y chromium (scripts/ensure_services.sh does it)`
  if (!existsSync(new URL('dashboard/dist/index.html', ROOT))) return 'dashboard/dist is missing: run npm run build:dashboard'
  return undefined
}

export async function launchBrowser (): Promise<Browser> {
  return await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'
    ]
  })
}

/** A fresh page (own sessionStorage) signed in with `key`, on the dashboard's landing view. */
export async function signedInPage (browser: Browser, baseUrl: string, key: string): Promise<Page> {
  // A context of its own (as axe-core's AxeBuilder requires), closed with the page.
  const context = await browser.newContext({ viewport: { width: 1200, height: 860 } })
  const page = await context.newPage()
  page.on('close', () => { context.close().catch(() => {}) })
  page.on('dialog', (d) => { void d.accept() })
  await page.goto(`${baseUrl}/dashboard`)
  await page.getByLabel('API key').fill(key)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByTestId('whoami').waitFor()
  return page
}

/** Saves docs/screenshots/<name>.png when OB_SCREENSHOTS=1 (so ordinary test runs leave docs alone). */
export async function screenshot (page: Page, name: string): Promise<void> {
  if (process.env.OB_SCREENSHOTS !== '1') return
  const dir = new URL('docs/screenshots/', ROOT)
  mkdirSync(dir, { recursive: true })
  // The window is grown to the page's height rather than using a full-page capture, which leaves sandboxed frames
  // (rendered in their own process) blank.
  const viewport = page.viewportSize()!
  // twice: views sized to the window (a frame's height) grow with it
  for (let i = 0; i < 2; i++) {
    const height = await page.evaluate(() => document.scrollingElement!.scrollHeight)
    await page.setViewportSize({ width: viewport.width, height })
    await page.waitForTimeout(300)
  }
  await page.screenshot({ path: new URL(`${name}.png`, dir).pathname })
  await page.setViewportSize(viewport)
}
