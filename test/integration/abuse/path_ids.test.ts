import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { ROUTES } from '../../../gateway/routes/mod.ts'
import { newId } from '../../../protocol/mod.ts'
import { queue, event, publish } from '../readmodel/fixtures.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * An id in a path is checked for its prefix and alphabet before anything looks it up: a malformed one is
 * `404 not_found` on every route that takes an id, and never reaches a store's key names.
 */
let ob: TestOutbox
let org: TestOrg
let operatorKey: string
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  operatorKey = (await ob.proc.cp.operatorKeys.create('path ids')).value
})
after(async () => { await ob.close() })

test('GET /v1/messages/{id}:evs (a read-model key suffix) is 404, not the events list of the message', async () => {
  const msg = await queue(ob, org)
  await publish(ob, event(org, msg.id, 'delivered'))
  await eventually(async () => {
    const r = await ob.request('GET', `/v1/messages/${msg.id}`, { key: org.adminKey })
    return r.body?.events?.length > 0 ? true : undefined
  }, 'the event in the read model')
  for (const suffix of [':evs', '%3Aevs', ':', '%00']) {
    const r = await ob.request('GET', `/v1/messages/${msg.id}${suffix}`, { key: org.adminKey })
    assert.equal(r.status, 404, `${suffix}: ${r.status} ${r.text}`)
    assert.equal(r.body.error.code, 'not_found', suffix)
  }
})

test('every route with an id answers 404 not_found for an id of the wrong shape', async () => {
  const idRoutes = ROUTES.filter((r) => r.path.includes(':id'))
  assert.ok(idRoutes.length >= 15, 'the route table lists the id routes')
  for (const def of idRoutes) {
    assert.ok(def.idPrefix !== undefined, `${def.path} declares its id prefix`)
    const good = newId(def.idPrefix!)
    const other = def.idPrefix === 'msg' ? newId('wh') : newId('msg')
    for (const id of [`${good}:evs`, `${good}%3Aevs`, good.toUpperCase(), `${good}0`, good.slice(0, -1), other, 'x', '%2E%2E',
      `${good}%0D%0AX-A:1`]) {
      const method = def.method === 'del' ? 'DELETE' : def.method.toUpperCase()
      const path = def.path.replace(':id', id)
      // `%2E%2E` is a dot segment to a URL parser, so the client sends the path without it (…/organizations/%2E%2E/audit-log
      // is /v1/operator/audit-log, a route of its own): such a request never names an id, and says nothing here.
      if (id === '%2E%2E' && new URL(path, 'http://h').pathname !== path) continue
      const body = def.method === 'get' || def.method === 'del' ? {} : { body: {} }
      const r = await ob.request(method, path, { key: def.permission === 'operator' ? operatorKey : org.adminKey, ...body })
      assert.equal(r.status, 404, `${method} ${path}: ${r.status} ${r.text}`)
      assert.equal(r.body.error.code, 'not_found', `${method} ${path}`)
    }
  }
})

test('a well-formed id that exists nowhere is still 404, and a real one still answers', async () => {
  const r = await ob.request('GET', `/v1/domains/${newId('dom')}`, { key: org.adminKey })
  assert.equal(r.status, 404)
  const mine = await ob.request('GET', `/v1/domains/${org.domainId}`, { key: org.adminKey })
  assert.equal(mine.status, 200)
})
