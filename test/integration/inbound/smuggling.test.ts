import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { addRoute } from '../../helpers/inbound.ts'
import { RawSmtp } from '../../helpers/raw_smtp.ts'

let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let events: EventReader

before(async () => {
  dns = await DnsServer.start({})
  ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address } })
  org = await ob.org()
  await addRoute(ob, org, `*@${org.domain}`, false)
  events = await EventReader.open(ob.proc.nc, org.orgId)
})
after(async () => {
  events.close()
  await ob.close()
  await dns.close()
})

for (const [name, terminator] of [
  ['<LF>.<LF>', '\n.\n'], ['<CR><LF>.<LF>', '\r\n.\n'], ['<LF>.<CR><LF>', '\n.\r\n'], ['<CR>.<LF>', '\r.\n'], ['<CR>.<CR><LF>', '\r.\r\n']
] as const) {
  test(`${name} inside DATA does not end the message: one message, the rest is content`, async () => {
    const before = events.of('inbound.received').length
    const s = await RawSmtp.open(ob.proc.inbound!.port)
    assert.match(await s.command('EHLO client.test'), /^250/)
    assert.match(await s.command('MAIL FROM:<a@sender.test>'), /^250/)
    assert.match(await s.command(`RCPT TO:<first@${org.domain}>`), /^250/)
    assert.match(await s.command('DATA'), /^354/)
    // An attempt to smuggle a second transaction behind a terminator a lenient parser would accept.
    s.write(`Subject: first\r\n\r\nvisible body${terminator}MAIL FROM:<evil@sender.test>\r\nRCPT TO:<second@${org.domain}>\r\n` +
      'DATA\r\nSubject: smuggled\r\n\r\nsmuggled body\r\n.\r\n')
    assert.match(await s.reply(), /^250 /, 'exactly one reply for the whole DATA')
    assert.match(await s.command('QUIT'), /^221/)
    s.close()
    const all = await events.waitFor('inbound.received', before + 1)
    await events.settle(600)
    assert.equal(events.of('inbound.received').length, before + 1, 'one message, not two')
    const d = all[before]!.data as any
    assert.equal(d.subject, 'first')
    assert.deepEqual(d.to, [`first@${org.domain}`])
    assert.match(d.text, /smuggled body/, 'the would-be second message is content of the first')
  })
}
