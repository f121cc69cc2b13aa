import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { loadConfig, ConfigError, DEFAULT_DELIVERY_RETRY_SCHEDULE } from '../../config/mod.ts'

test('defaults match the documented values', () => {
  const c = loadConfig({})
  assert.equal(c.http.host, '127.0.0.1')
  assert.equal(c.http.port, 8080)
  assert.equal(c.http.publicUrl, 'http://127.0.0.1:8080')
  assert.deepEqual(c.nats.servers, ['nats://127.0.0.1:4222'])
  assert.equal(c.nats.configured, false)
  assert.equal(c.redis.url, 'redis://127.0.0.1:6379')
  assert.equal(c.smtp.inboundPort, 2525)
  assert.equal(c.bootstrap.domain, 'example.com')
  assert.equal(c.bootstrap.plan, 'free')
  assert.equal(c.webhook.allowPrivate, false)
  assert.deepEqual(c.webhook.retryScheduleS, [60, 300, 1800, 7200, 18000, 36000, 36000, 36000, 36000, 36000])
  assert.equal(c.domainVerification, 'dns')
  assert.equal(c.role, 'all')
})

test('the default delivery schedule stays inside 72 hours', () => {
  const total = DEFAULT_DELIVERY_RETRY_SCHEDULE.split(',').map(Number).reduce((a, b) => a + b, 0)
  assert.ok(total <= 72 * 3600, `schedule sums to ${total} s`)
})

test('values are converted from strings and the result is frozen', () => {
  const c = loadConfig({ OB_HTTP_PORT: '9090', OB_WEBHOOK_ALLOW_PRIVATE: 'true', NATS_URL: 'nats://a:1,nats://b:2', OB_DNS_SERVERS: '127.0.0.1:53,10.0.0.1' })
  assert.equal(c.http.port, 9090)
  assert.equal(c.webhook.allowPrivate, true)
  assert.deepEqual(c.nats.servers, ['nats://a:1', 'nats://b:2'])
  assert.equal(c.nats.configured, true)
  assert.deepEqual(c.dnsServers, ['127.0.0.1:53', '10.0.0.1'])
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.http) && Object.isFrozen(c.webhook.retryScheduleS))
})

test('a bad value fails with one line naming every bad variable', () => {
  assert.throws(() => loadConfig({ OB_HTTP_PORT: 'eighty', OB_ROLE: 'worker', OB_WEBHOOK_RETRY_SCHEDULE: '1,x' }), (err: unknown) => {
    assert.ok(err instanceof ConfigError)
    assert.deepEqual([...err.variables].sort(), ['OB_HTTP_PORT', 'OB_ROLE', 'OB_WEBHOOK_RETRY_SCHEDULE'])
    assert.ok(!err.message.includes('\n'))
    assert.match(err.message, /OB_ROLE must be one of gateway, engine, inbound, all \(got "worker"\)/)
    return true
  })
})

test('an integer setting given as a fraction or in exponent form is refused, not truncated', () => {
  assert.throws(() => loadConfig({ OB_HTTP_PORT: '8080.5', OB_STUCK_AFTER_MS: '1e4' }), (err: unknown) => {
    assert.ok(err instanceof ConfigError)
    assert.equal(err.message, 'invalid configuration: OB_HTTP_PORT must be integer (got "8080.5"); ' +
      'OB_STUCK_AFTER_MS must be integer (got "1e4")')
    return true
  })
  assert.equal(loadConfig({ OB_HTTP_PORT: ' 0080 ' }).http.port, 80)
})

test('empty strings count as unset', () => {
  assert.equal(loadConfig({ OB_HTTP_PORT: '' }).http.port, 8080)
})

test('a bootstrap key must look like a live key', () => {
  assert.throws(() => loadConfig({ OB_BOOTSTRAP_ADMIN_KEY: 'secret' }), ConfigError)
  assert.equal(loadConfig({ OB_BOOTSTRAP_ADMIN_KEY: 'ob_live_' + 'a'.repeat(32) }).bootstrap.adminKey, 'ob_live_' + 'a'.repeat(32))
})

test('the example environment file is valid', () => {
  const env: Record<string, string> = {}
  for (const line of readFileSync(new URL('../../../config/outbox.example.env', import.meta.url), 'utf8').split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim())
    if (m !== null) env[m[1]!] = m[2]!
  }
  assert.ok(Object.keys(env).length >= 10)
  loadConfig(env)
})

test('OB_TRUSTED_PROXIES is a list of addresses and CIDR ranges, empty by default', () => {
  assert.deepEqual(loadConfig({}).http.trustedProxies, [])
  assert.deepEqual(loadConfig({ OB_TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.1,2001:db8::/32' }).http.trustedProxies, [
    { address: '10.0.0.0', prefix: 8, family: 'ipv4' },
    { address: '192.0.2.1', prefix: 32, family: 'ipv4' },
    { address: '2001:db8::', prefix: 32, family: 'ipv6' }
  ])
  for (const bad of ['10.0.0.0/33', 'proxy.internal', '10.0.0.0/8,,', '::1/129', '10.0.0.0/x']) {
    assert.throws(() => loadConfig({ OB_TRUSTED_PROXIES: bad }),
      (err: unknown) => err instanceof ConfigError && err.variables.includes('OB_TRUSTED_PROXIES'), bad)
  }
})

test('the default public URL follows OB_HTTP_PORT; a set OB_PUBLIC_URL wins', () => {
  assert.equal(loadConfig({ OB_HTTP_PORT: '9090' }).http.publicUrl, 'http://127.0.0.1:9090')
  assert.equal(loadConfig({ OB_HTTP_PORT: '9090', OB_PUBLIC_URL: 'https://mail.example.net/' }).http.publicUrl, 'https://mail.example.net')
})

test('the MX host: OB_MX_HOST, else the public URL\'s host when it is a name, else none', () => {
  assert.equal(loadConfig({}).http.mxHost, undefined, '127.0.0.1 is an address, not a host name')
  assert.equal(loadConfig({ OB_PUBLIC_URL: 'http://[::1]:8080' }).http.mxHost, undefined)
  assert.equal(loadConfig({ OB_PUBLIC_URL: 'https://Mail.Example.net/' }).http.mxHost, 'mail.example.net')
  assert.equal(loadConfig({ OB_PUBLIC_URL: 'https://mail.example.net', OB_MX_HOST: 'mx1.example.net.' }).http.mxHost, 'mx1.example.net')
  for (const bad of ['10.0.0.1', 'mx example.net', '-mx.example.net', 'mx..example.net']) {
    assert.throws(() => loadConfig({ OB_MX_HOST: bad }),
      (err: unknown) => err instanceof ConfigError && err.variables.includes('OB_MX_HOST'), bad)
  }
})

test('OB_MESSAGE_CONTENT_RETENTION_DAYS: whole days from 0 (nothing recorded) to 30, 30 by default', () => {
  assert.equal(loadConfig({}).messageContent.retentionDays, 30)
  assert.equal(loadConfig({ OB_MESSAGE_CONTENT_RETENTION_DAYS: '0' }).messageContent.retentionDays, 0)
  assert.equal(loadConfig({ OB_MESSAGE_CONTENT_RETENTION_DAYS: ' 7 ' }).messageContent.retentionDays, 7)
  assert.equal(loadConfig({ OB_MESSAGE_CONTENT_RETENTION_DAYS: '30' }).messageContent.retentionDays, 30)
  const refused = (value: string): string => {
    try {
      loadConfig({ OB_MESSAGE_CONTENT_RETENTION_DAYS: value })
    } catch (err) {
      assert.ok(err instanceof ConfigError, value)
      assert.deepEqual(err.variables, ['OB_MESSAGE_CONTENT_RETENTION_DAYS'], value)
      return err.message
    }
    assert.fail(`${value} was accepted`)
  }
  assert.equal(refused('31'), 'invalid configuration: OB_MESSAGE_CONTENT_RETENTION_DAYS must be <= 30 (got 31)')
  assert.equal(refused('-1'), 'invalid configuration: OB_MESSAGE_CONTENT_RETENTION_DAYS must be >= 0 (got -1)')
  for (const bad of ['1.5', 'seven', '7d']) {
    assert.equal(refused(bad), `invalid configuration: OB_MESSAGE_CONTENT_RETENTION_DAYS must be integer (got "${bad}")`)
  }
})

test('reputation thresholds: percentages become fractions, out-of-range values are refused', () => {
  assert.deepEqual(loadConfig({}).reputation, {
    enabled: true, thresholds: { complaintRate: 0.003, bounceRate: 0.05, minVolume: 1000, windowHours: 24 }
  })
  const c = loadConfig({ OB_REPUTATION_GUARD: 'off', OB_REPUTATION_MAX_COMPLAINT_PCT: '0.1', OB_REPUTATION_MAX_BOUNCE_PCT: '2.5' })
  assert.equal(c.reputation.enabled, false)
  assert.equal(c.reputation.thresholds.complaintRate, 0.001)
  assert.equal(c.reputation.thresholds.bounceRate, 0.025)
  const bad = { OB_REPUTATION_MAX_COMPLAINT_PCT: '0', OB_REPUTATION_MIN_VOLUME: '0', OB_REPUTATION_WINDOW_HOURS: '169' }
  assert.throws(() => loadConfig(bad),
    (err: ConfigError) => {
      assert.deepEqual([...err.variables].sort(),
        ['OB_REPUTATION_MAX_COMPLAINT_PCT', 'OB_REPUTATION_MIN_VOLUME', 'OB_REPUTATION_WINDOW_HOURS'])
      return true
    })
})
