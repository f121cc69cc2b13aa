import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { MAX_SITE_ID_LENGTH, PROVIDERS, providerOf } from '../../../protocol/egress/mod.ts'

test('providers: real MX sets are recognised, whatever their case, order and trailing dot', () => {
  const table: Array<[string[], string]> = [
    [['gmail-smtp-in.l.google.com.', 'alt1.gmail-smtp-in.l.google.com.', 'alt2.gmail-smtp-in.l.google.com.'], 'google'],
    [['ASPMX.L.GOOGLE.COM', 'alt1.aspmx.l.google.com', 'aspmx2.googlemail.com', 'aspmx3.googlemail.com'], 'google'],
    [['smtp.google.com'], 'google'],
    [['contoso-com.mail.protection.outlook.com'], 'microsoft'],
    [['hotmail-com.olc.protection.outlook.com.'], 'microsoft'],
    [['outlook-com.olc.protection.outlook.com'], 'microsoft'],
    [['contoso-com.o-v1.mx.microsoft'], 'microsoft'],
    [['mx1.hotmail.com', 'mx2.hotmail.com'], 'microsoft'],
    [['mta5.am0.yahoodns.net', 'mta6.am0.yahoodns.net', 'mta7.am0.yahoodns.net'], 'yahoo'],
    [['mx-aol.mail.gm0.yahoodns.net'], 'yahoo'],
    [['mailin-01.mx.aol.com', 'mailin-02.mx.aol.com'], 'yahoo'],
    [['mx-att.mail.am0.yahoodns.net'], 'yahoo'],
    [['mx01.mail.icloud.com.', 'mx02.mail.icloud.com.'], 'apple'],
    [['mx00.emig.gmx.net', 'mx01.emig.gmx.net'], 'gmx'],
    [['mx-ha03.web.de', 'mx-ha02.web.de'], 'gmx'],
    [['mx00.mail.com', 'mx01.mail.com'], 'gmx'],
    [['smtp-in.orange.fr'], 'orange'],
    [['mx1h1.comcast.net', 'mx2c1.comcast.net'], 'comcast'],
    [['mx.zoho.com', 'mx2.zoho.com', 'mx3.zoho.com'], 'zoho'],
    [['mx.zoho.eu', 'mx2.zoho.eu'], 'zoho'],
    [['in1-smtp.messagingengine.com', 'in2-smtp.messagingengine.com'], 'fastmail'],
    [['mail.protonmail.ch', 'mailsec.protonmail.ch'], 'protonmail'],
    [['mx.yandex.ru'], 'yandex'],
    [['mx.yandex.net'], 'yandex'],
    [['mxs.mail.ru', 'emx.mail.ru'], 'mailru']
  ]
  for (const [hosts, provider] of table) assert.equal(providerOf(hosts), provider, hosts.join(','))
})

test('providers: any other MX set is its own site, named by its sorted lower-case host names', () => {
  assert.equal(providerOf(['MX2.example.net.', 'mx1.example.net']), 'site:mx1.example.net,mx2.example.net')
  assert.equal(providerOf(['mx1.example.net', 'mx1.example.net.']), 'site:mx1.example.net', 'duplicates count once')
  // a suffix matches at a dot boundary only
  assert.equal(providerOf(['mx.notgoogle.com']), 'site:mx.notgoogle.com')
  assert.equal(providerOf(['mx.hotmail.com.evil.example']), 'site:mx.hotmail.com.evil.example')
  assert.equal(providerOf(['mx1.fastmail.com']), 'site:mx1.fastmail.com')
  // Mimecast runs one set of servers per region: each region is a site
  assert.equal(providerOf(['eu-smtp-inbound-1.mimecast.com', 'eu-smtp-inbound-2.mimecast.com']),
    'site:eu-smtp-inbound-1.mimecast.com,eu-smtp-inbound-2.mimecast.com')
  // yahoo.co.jp is not Yahoo's infrastructure
  assert.equal(providerOf(['mx1.mail.yahoo.co.jp']), 'site:mx1.mail.yahoo.co.jp')
})

test('providers: a set that blends a provider with other hosts is a site (every host must match)', () => {
  assert.equal(providerOf(['aspmx.l.google.com', 'backup-mx.example.org']), 'site:aspmx.l.google.com,backup-mx.example.org')
  assert.equal(providerOf(['aspmx.l.google.com', 'contoso-com.mail.protection.outlook.com']),
    'site:aspmx.l.google.com,contoso-com.mail.protection.outlook.com')
})

test('providers: no MX names means the domain itself receives (implicit MX): site:<domain>', () => {
  assert.equal(providerOf([], 'Example.ORG.'), 'site:example.org')
  assert.equal(providerOf(['', '.'], 'example.org'), 'site:example.org', 'empty names are no names')
  assert.equal(providerOf([]), 'site:')
})

test('providers: a site id longer than 200 characters is site: + 32 hex characters of the names\' sha256', () => {
  const hosts = Array.from({ length: 12 }, (_, i) => `mx${i}.a-rather-long-mail-exchanger-name.example.com`)
  const joined = [...hosts].sort().join(',')
  assert.ok(('site:' + joined).length > MAX_SITE_ID_LENGTH)
  const id = providerOf([...hosts].reverse())
  assert.equal(id, 'site:' + createHash('sha256').update(joined).digest('hex').slice(0, 32))
  assert.equal(providerOf(hosts), id, 'the order of the names does not matter')
  const short = Array.from({ length: 3 }, (_, i) => `mx${i}.example.com`)
  assert.ok(providerOf(short).length <= MAX_SITE_ID_LENGTH)
  assert.equal(providerOf(short), 'site:' + short.join(','))
})

test('providers: ids are unique and no MX suffix belongs to two providers', () => {
  const ids = PROVIDERS.map((p) => p.id)
  assert.equal(new Set(ids).size, ids.length)
  for (const p of PROVIDERS) {
    assert.match(p.id, /^[a-z0-9]+$/, 'a provider id never looks like a site')
    for (const suffix of p.mx) {
      assert.equal(suffix, suffix.toLowerCase())
      assert.ok(!suffix.startsWith('.') && !suffix.endsWith('.'), suffix)
      for (const q of PROVIDERS) {
        if (q === p) continue
        for (const other of q.mx) assert.ok(other !== suffix && !other.endsWith(`.${suffix}`), `${p.id} ${suffix} / ${q.id} ${other}`)
      }
    }
  }
})
