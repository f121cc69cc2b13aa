import { test } from 'node:test'
import assert from 'node:assert/strict'
import { planBinary, parseNatsVersion, supportsSyncAlways, CliError } from '../../cli/binaries.ts'
import { planEmbedded, natsConfigText, answers } from '../../cli/embedded_services.ts'
import { parseOrgCreateArgs } from '../../cli/org_create.ts'
import { loadConfig } from '../../config/mod.ts'
import { freePort } from '../helpers/ports.ts'

test('embedded servers start only when unconfigured and nothing answers', () => {
  assert.deepEqual(planEmbedded({ natsConfigured: false, redisConfigured: false, natsAnswers: false, redisAnswers: false }),
    { nats: true, redis: true })
  assert.deepEqual(planEmbedded({ natsConfigured: false, redisConfigured: false, natsAnswers: true, redisAnswers: false }),
    { nats: false, redis: true })
  assert.deepEqual(planEmbedded({ natsConfigured: true, redisConfigured: true, natsAnswers: false, redisAnswers: false }),
    { nats: false, redis: false })
})

test('a free port does not answer, so the plan for it is to spawn', async () => {
  const port = await freePort()
  const natsAnswers = await answers(port)
  assert.equal(natsAnswers, false)
  assert.equal(planEmbedded({ natsConfigured: false, redisConfigured: true, natsAnswers, redisAnswers: false }).nats, true)
})

test('a missing binary is installed as root with apt-get, otherwise refused naming the package', () => {
  assert.deepEqual(planBinary({ name: 'nats-server', found: '/usr/sbin/nats-server', isRoot: false, hasAptGet: false }),
    { action: 'use', path: '/usr/sbin/nats-server' })
  assert.deepEqual(planBinary({ name: 'redis-server', isRoot: true, hasAptGet: true }),
    { action: 'install', command: ['apt-get', 'install', '-y', 'redis-server'] })
  const refused = planBinary({ name: 'nats-server', isRoot: false, hasAptGet: true })
  assert.equal(refused.action, 'refuse')
  assert.match((refused as { message: string }).message, /apt-get install -y nats-server/)
  assert.doesNotMatch((refused as { message: string }).message, /\n/)
})

test('sync_interval: always is written only for nats-server 2.10 and later', () => {
  assert.deepEqual(parseNatsVersion('nats-server: v2.9.10\n'), [2, 9, 10])
  assert.equal(supportsSyncAlways([2, 9, 10]), false)
  assert.equal(supportsSyncAlways([2, 10, 0]), true)
  assert.equal(supportsSyncAlways([3, 0, 0]), true)
  const old = natsConfigText({ host: '127.0.0.1', port: 4222, storeDir: '/x/nats', syncAlways: false })
  const recent = natsConfigText({ host: '127.0.0.1', port: 4222, storeDir: '/x/nats', syncAlways: true })
  assert.doesNotMatch(old, /sync_interval/)
  assert.match(recent, /sync_interval: always/)
  assert.match(recent, /store_dir: "\/x\/nats"/)
})

test('the embedded server\'s JetStream store is OB_NATS_STORE_MB, inside its jetstream block', () => {
  const storeBytes = loadConfig({ OB_NATS_STORE_MB: '2048' }).nats.storeBytes
  assert.equal(storeBytes, 2048 * 1024 * 1024)
  const text = natsConfigText({ host: '127.0.0.1', port: 4222, storeDir: '/x/nats', syncAlways: false, storeBytes })
  assert.match(text, /jetstream \{\n( {2}.*\n)* {2}max_file_store: 2147483648\n\}/)
  assert.equal(loadConfig({}).nats.storeBytes, 10240 * 1024 * 1024)
})

test('org create arguments: defaults, normalisation and usage errors with exit code 2', () => {
  assert.deepEqual(parseOrgCreateArgs(['--name', 'Acme', '--domain', 'Acme.Example']),
    { name: 'Acme', domain: 'acme.example', plan: 'free' })
  assert.equal(parseOrgCreateArgs(['--name', 'A', '--domain', 'a.io', '--plan', 'pro']).plan, 'pro')
  for (const bad of [[], ['--name', 'A'], ['--name', 'A', '--domain', 'nodot'], ['--name', 'A', '--domain', 'a.io', '--plan', 'gold'],
    ['--name', 'A', '--domain', 'a.io', '--bogus', 'x'], ['stray']]) {
    assert.throws(() => parseOrgCreateArgs(bad), (err: unknown) => err instanceof CliError && err.exitCode === 2 && /usage: outbox org create/.test(err.message), JSON.stringify(bad))
  }
})
