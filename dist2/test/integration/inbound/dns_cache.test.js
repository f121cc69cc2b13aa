import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { DnsServer } from '../../helpers/dns_server.js';
import { dnsResolver } from '../../../inbound/authenticate.js';
let dns;
before(async () => { dns = await DnsServer.start({ TXT: { 'sender.test': ['v=spf1 -all'] } }); });
after(async () => { await dns.close(); });
test('SPF/DMARC look-ups are answered from the cache, answers and missing names alike, and expire', async () => {
    const cached = dnsResolver([dns.address], 60_000);
    const fresh = dnsResolver([dns.address], 0);
    assert.deepEqual(await cached('sender.test', 'TXT'), [['v=spf1 -all']]);
    await assert.rejects(cached('_dmarc.sender.test', 'TXT'), { code: 'ENOTFOUND' });
    dns.table.TXT['sender.test'] = ['v=spf1 +all'];
    dns.table.TXT['_dmarc.sender.test'] = ['v=DMARC1; p=reject'];
    assert.deepEqual(await cached('SENDER.test', 'TXT'), [['v=spf1 -all']], 'the cached answer, whatever the case of the name');
    await assert.rejects(cached('_dmarc.sender.test', 'TXT'), { code: 'ENOTFOUND' }, 'a missing name is remembered too');
    assert.deepEqual(await fresh('sender.test', 'TXT'), [['v=spf1 +all']]);
    assert.deepEqual(await fresh('_dmarc.sender.test', 'TXT'), [['v=DMARC1; p=reject']]);
});
test('a caller changing an answer does not change what the next one gets', async () => {
    const cached = dnsResolver([dns.address], 60_000);
    const first = await cached('sender.test', 'TXT');
    first[0][0] = 'changed';
    assert.notEqual((await cached('sender.test', 'TXT'))[0][0], 'changed');
});
//# sourceMappingURL=dns_cache.test.js.map