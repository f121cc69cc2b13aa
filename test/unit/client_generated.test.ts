import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { generateClient } from '../../scripts/gen_client.ts'

const ROOT = new URL('../../../', import.meta.url)

test('client/src/generated.ts matches docs/openapi.json (run `npm run gen:client` after `npm run openapi`)', () => {
  const doc = JSON.parse(readFileSync(new URL('docs/openapi.json', ROOT), 'utf8'))
  const committed = readFileSync(new URL('client/src/generated.ts', ROOT), 'utf8')
  assert.equal(committed, generateClient(doc), 'client/src/generated.ts is stale: run `npm run gen:client`')
})

test('every HTTP operation of openapi.json has a generated method', () => {
  const doc = JSON.parse(readFileSync(new URL('docs/openapi.json', ROOT), 'utf8'))
  const src = generateClient(doc)
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    if (path.startsWith('/t/')) continue // tracking links are for recipients' mail clients, not for senders' code
    if (path.startsWith('/v1/operator/')) continue // the operator API takes operator keys, which no sender holds
    for (const [method, op] of Object.entries(ops)) {
      if (op.responses['101'] !== undefined) continue
      assert.match(src, new RegExp(`/\\*\\* ${method.toUpperCase()} ${path.replace(/[{}]/g, '\\$&')}:`), `${method} ${path}`)
    }
  }
})

test('a new route in openapi.json appears as a typed method', () => {
  const doc = JSON.parse(readFileSync(new URL('docs/openapi.json', ROOT), 'utf8'))
  doc.paths['/v1/messages/send'] = {
    post: {
      operationId: 'postMessagesSend',
      summary: 'Send a message',
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { type: 'object', required: ['to'], properties: { to: { type: 'string' } } } } }
      },
      responses: {
        202: { content: { 'application/json': { schema: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } } } }
      }
    }
  }
  const src = generateClient(doc)
  assert.match(src, /export type PostMessagesSendBody = \{\n {2}to: string\n\}/)
  assert.match(src, /send: async \(body: PostMessagesSendBody, options\?: RequestOptions\): Promise<PostMessagesSendResponse> => await call<PostMessagesSendResponse>\(\{ method: 'POST', path: '\/v1\/messages\/send', body, idempotent: true \}, options\)/)
})
