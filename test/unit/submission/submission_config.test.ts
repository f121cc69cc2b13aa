import { test } from 'node:test'
import assert from 'node:assert/strict'
import { loadConfig, ConfigError } from '../../../config/mod.ts'

test('SMTP submission listens on 127.0.0.1:2587 by default, STARTTLS-only AUTH, and port 0 turns it off', () => {
  const c = loadConfig({})
  assert.equal(c.submission.enabled, true)
  assert.equal(c.submission.host, '127.0.0.1')
  assert.equal(c.submission.port, 2587)
  assert.equal(c.submission.insecureAuth, false)
  assert.equal(c.submission.maxConnections, 500)
  assert.equal(c.submission.maxConnectionsPerAddress, 20)
  assert.equal(c.submission.idleTimeoutMs, 60_000)
  assert.equal(c.submission.sessionDeadlineMs, 600_000)
  assert.equal(loadConfig({ OB_SMTP_SUBMISSION_PORT: '0' }).submission.enabled, false)
})

test('a TLS certificate file without its key (or the reverse) refuses to start, naming the missing one', () => {
  assert.throws(() => loadConfig({ OB_SMTP_TLS_CERT_FILE: '/etc/cert.pem' }),
    (err: unknown) => err instanceof ConfigError && err.variables.includes('OB_SMTP_TLS_KEY_FILE'))
  assert.throws(() => loadConfig({ OB_SMTP_TLS_KEY_FILE: '/etc/key.pem' }),
    (err: unknown) => err instanceof ConfigError && err.variables.includes('OB_SMTP_TLS_CERT_FILE'))
  assert.equal(loadConfig({ OB_SMTP_TLS_CERT_FILE: '/c', OB_SMTP_TLS_KEY_FILE: '/k' }).submission.tlsCertFile, '/c')
  assert.throws(() => loadConfig({ OB_SMTP_SUBMISSION_PORT: '70000' }), ConfigError)
})
