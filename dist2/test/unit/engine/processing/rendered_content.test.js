import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderedContent, withContent } from '../../../../engine/processing/rendered_content.js';
const BASE = { id: 'msg_01', to: ['a@x.org'], variables: { name: '<Ann>' } };
test('a template message is rendered from its copy with its variables; any other keeps its own parts', () => {
    const tpl = { ...BASE, template_id: 'tpl_1', subject: 'Hi {{name}}', html: '<p>{{name}}</p>', text: 'Hello {{name}}' };
    assert.deepEqual(renderedContent(tpl), { subject: 'Hi <Ann>', html: '<p>&lt;Ann&gt;</p>', text: 'Hello <Ann>' });
    assert.deepEqual(renderedContent({ ...BASE, subject: 'Hi {{name}}', text: 'plain' }), { subject: 'Hi {{name}}', text: 'plain' });
});
test('the thread gets the message with the rendered parts in place of its own; a part the rendering lacks is absent', () => {
    const tpl = { ...BASE, template_id: 'tpl_1', subject: 'Hi {{name}}', html: '<p>{{name}}</p>', text: 'Hello {{name}}' };
    const out = withContent(tpl, { subject: 'Hi <Ann>', html: '<p>&lt;Ann&gt;</p>' });
    assert.equal(out.subject, 'Hi <Ann>');
    assert.equal(out.html, '<p>&lt;Ann&gt;</p>');
    assert.equal(Object.hasOwn(out, 'text'), false);
    assert.deepEqual(out.to, ['a@x.org']);
    assert.equal(tpl.subject, 'Hi {{name}}', 'the queued message is left as it is');
});
//# sourceMappingURL=rendered_content.test.js.map