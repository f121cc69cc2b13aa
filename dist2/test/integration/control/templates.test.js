import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { renderTemplate } from '../../../protocol/mod.js';
import { TestOutbox } from '../../helpers/outbox.js';
let ob;
let org;
let other;
before(async () => {
    ob = await TestOutbox.start();
    org = await ob.org();
    other = await ob.org();
});
after(async () => { await ob.close(); });
const welcome = { name: 'welcome', subject: 'Welcome, {{name}}', html: '<h1>Hi {{ name }}</h1><p>{{plan}}</p>', text: 'Hi {{name}}' };
test('create, read, list: 201 with the placeholders it uses, then the stored template renders', async () => {
    const r = await ob.request('POST', '/v1/templates', { key: org.adminKey, body: welcome });
    assert.equal(r.status, 201);
    assert.match(r.body.id, /^tpl_[0-9a-z]{26}$/);
    assert.equal(r.body.subject, welcome.subject);
    assert.equal(r.body.html, welcome.html);
    assert.equal(r.body.text, welcome.text);
    assert.deepEqual(r.body.variables, ['name', 'plan']);
    const one = await ob.request('GET', `/v1/templates/${r.body.id}`, { key: org.adminKey });
    assert.deepEqual(one.body, r.body);
    const list = await ob.request('GET', '/v1/templates', { key: org.adminKey });
    assert.ok(list.body.data.some((t) => t.id === r.body.id));
    const stored = ob.proc.cp.templates.getBy('id', r.body.id);
    assert.deepEqual(renderTemplate(stored, { name: '<Ann>', plan: 'pro' }), {
        subject: 'Welcome, <Ann>', html: '<h1>Hi &lt;Ann&gt;</h1><p>pro</p>', text: 'Hi <Ann>'
    });
});
test('PATCH changes only the given fields; text: null removes the text part', async () => {
    const t = (await ob.request('POST', '/v1/templates', { key: org.adminKey, body: welcome })).body;
    const p = await ob.request('PATCH', `/v1/templates/${t.id}`, { key: org.adminKey, body: { subject: 'Hello {{first}}' } });
    assert.equal(p.status, 200);
    assert.equal(p.body.subject, 'Hello {{first}}');
    assert.equal(p.body.html, welcome.html);
    assert.deepEqual(p.body.variables, ['first', 'name', 'plan']);
    assert.ok(Date.parse(p.body.updated_at) >= Date.parse(t.updated_at));
    const noText = await ob.request('PATCH', `/v1/templates/${t.id}`, { key: org.adminKey, body: { text: null } });
    assert.equal(noText.status, 200);
    assert.equal('text' in noText.body, false);
});
test('validation: required fields, a line break in the subject, empty PATCH, unknown fields', async () => {
    const missing = await ob.request('POST', '/v1/templates', { key: org.adminKey, body: { name: 'x' } });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.error.errors.map((e) => e.field).sort(), ['html', 'subject']);
    const crlf = await ob.request('POST', '/v1/templates', { key: org.adminKey, body: { ...welcome, subject: 'a\r\nBcc: x@y.z' } });
    assert.equal(crlf.status, 400);
    assert.equal(crlf.body.error.errors[0].field, 'subject');
    // NUL too: the subject is copied into queued messages, which must pass the same rule as a send request's subject.
    const nul = await ob.request('POST', '/v1/templates', { key: org.adminKey, body: { ...welcome, subject: 'a\u0000b' } });
    assert.equal(nul.status, 400);
    assert.deepEqual(nul.body.error.errors, [{ field: 'subject', message: 'must not contain CR, LF or NUL' }]);
    const t = (await ob.request('POST', '/v1/templates', { key: org.adminKey, body: welcome })).body;
    assert.equal((await ob.request('PATCH', `/v1/templates/${t.id}`, { key: org.adminKey, body: {} })).status, 400);
    const unknown = await ob.request('PATCH', `/v1/templates/${t.id}`, { key: org.adminKey, body: { colour: 'red' } });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.errors[0].field, 'colour');
});
test('a template too large for the store is 400, not a server error', async () => {
    const big = 'é'.repeat(700_000);
    const r = await ob.request('POST', '/v1/templates', { key: org.adminKey, body: { ...welcome, html: big } });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.errors[0].field, 'html');
});
test('DELETE: 204, then 404', async () => {
    const t = (await ob.request('POST', '/v1/templates', { key: org.adminKey, body: welcome })).body;
    assert.equal((await ob.request('DELETE', `/v1/templates/${t.id}`, { key: org.adminKey })).status, 204);
    assert.equal((await ob.request('GET', `/v1/templates/${t.id}`, { key: org.adminKey })).status, 404);
    assert.equal((await ob.request('PATCH', `/v1/templates/${t.id}`, { key: org.adminKey, body: { name: 'n' } })).status, 404);
});
test('another organisation\'s template is 403 on every endpoint', async () => {
    const theirs = (await ob.request('POST', '/v1/templates', { key: other.adminKey, body: welcome })).body;
    for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'mine' }], ['DELETE', undefined]]) {
        const r = await ob.request(method, `/v1/templates/${theirs.id}`, { key: org.adminKey, ...(body !== undefined ? { body } : {}) });
        assert.equal(r.status, 403, method);
        assert.equal(r.body.error.code, 'forbidden');
    }
    assert.equal((await ob.request('GET', `/v1/templates/${theirs.id}`, { key: other.adminKey })).body.name, 'welcome');
});
//# sourceMappingURL=templates.test.js.map