import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { TestOutbox } from '../../helpers/outbox.ts'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))
const BIN = join(ROOT, 'node_modules', '.bin')

let ob: TestOutbox
let work: string
before(async () => {
  ob = await TestOutbox.start()
  work = mkdtempSync(join(tmpdir(), 'outbox-client-pkg-'))
})
after(async () => {
  await ob?.close()
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

/** npm with an empty cache of its own and no registry to reach: anything it would fetch fails the install. */
async function npm (cwd: string, args: string[]): Promise<string> {
  const env = {
    ...process.env,
    PATH: `${BIN}:${process.env.PATH ?? ''}`,
    npm_config_cache: join(work, 'npm-cache'),
    npm_config_registry: 'http://127.0.0.1:9/',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false'
  }
  const { stdout } = await run('npm', args, { cwd, env, timeout: 240_000 })
  return stdout
}

test('the client packs (its prepare script builds dist), installs offline into an empty project, ' +
  'and sends through a running Outbox', async () => {
  // A copy of the package as a checkout has it: sources only, no dist.
  const source = join(work, 'client')
  mkdirSync(source)
  for (const name of ['package.json', 'tsconfig.json', 'README.md', 'src']) {
    cpSync(join(ROOT, 'client', name), join(source, name), { recursive: true })
  }
  await npm(source, ['pack', '--offline', '--pack-destination', work])
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))
  assert.ok(tarball !== undefined, 'npm pack wrote a tarball')

  const app = join(work, 'app')
  mkdirSync(app)
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }))
  await npm(app, ['install', '--offline', join(work, tarball)])

  const org = await ob.org('pro')
  writeFileSync(join(app, 'send.js'), `
import { OutboxClient } from '@outbox/client'
const outbox = new OutboxClient({ apiKey: process.env.OUTBOX_KEY, baseUrl: process.env.OUTBOX_URL })
const sent = await outbox.messages.send({
  from: 'app@${org.domain}', to: 'someone@example.net', subject: 'From the package', html: '<p>Hi</p>'
})
const batch = await outbox.messages.batch({
  messages: [{ from: 'app@${org.domain}', to: 'other@example.net', subject: 'Batch', html: '<p>Hi</p>' }]
})
const read = await outbox.messages.get(sent.id)
console.log(JSON.stringify({ sent, batch, subject: read.subject }))
`)
  const { stdout } = await run(process.execPath, ['send.js'], {
    cwd: app, env: { ...process.env, OUTBOX_KEY: org.adminKey, OUTBOX_URL: ob.baseUrl }, timeout: 60_000
  })
  const out = JSON.parse(stdout)
  assert.match(out.sent.id, /^msg_/)
  assert.equal(out.subject, 'From the package')
  assert.equal(out.batch.data.length, 1)
  assert.match(out.batch.data[0].id, /^msg_/)
})
