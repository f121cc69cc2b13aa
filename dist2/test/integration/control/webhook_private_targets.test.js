import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TestOutbox } from '../../helpers/outbox.js';
let ob;
let org;
before(async () => {
    ob = await TestOutbox.start({ env: { OB_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    org = await ob.org();
});
after(async () => { await ob.close(); });
test('OB_WEBHOOK_ALLOW_PRIVATE=true accepts loopback targets but still demands https', async () => {
    const ok = await ob.request('POST', '/v1/webhooks', { key: org.adminKey, body: { url: 'https://127.0.0.1:9443/hook', events: ['delivered'] } });
    assert.equal(ok.status, 201);
    const plain = await ob.request('POST', '/v1/webhooks', { key: org.adminKey, body: { url: 'http://127.0.0.1:9443/hook', events: ['delivered'] } });
    assert.equal(plain.status, 400);
    assert.equal(plain.body.error.errors[0].field, 'url');
});
//# sourceMappingURL=webhook_private_targets.test.js.map