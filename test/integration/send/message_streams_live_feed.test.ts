import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { WebSocket } from 'undici'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * The live feed's stream filter against real servers: one Outbox (all roles) relaying to an SMTP sink; mail is sent
 * on `transactional` and on a broadcast stream, and each socket forwards the delivered events of its stream only.
 */
let ob: TestOutbox
let sink: SmtpSink
let org: TestOrg
let n = 0
before(async () => {
  sink = await SmtpSink.start()
  ob = await TestOutbox.start({ env: { OB_ROLE: 'all', OB_SMTP_RELAY: sink.url } })
  org = await ob.org()
  const other = await ob.org()
  for (const [o, id] of [[org, 'news'], [other, 'promo']] as const) {
    const r = await ob.request('POST', '/v1/streams', { key: o.adminKey, body: { id, name: id } })
    assert.equal(r.status, 201, r.text)
  }
})
after(async () => {
  await ob.close()
  await sink.close()
})

/** A socket that keeps what it receives, so a test can wait for a message or an event. */
class Feed {
  readonly ws: WebSocket
  readonly received: any[] = []
  private taken = 0

  constructor () {
    this.ws = new WebSocket(ob.baseUrl.replace('http', 'ws') + '/v1/events/stream')
    this.ws.addEventListener('message', (m) => { this.received.push(JSON.parse(String(m.data))) })
  }

  static async open (): Promise<Feed> {
    const f = new Feed()
    await new Promise((resolve, reject) => {
      f.ws.addEventListener('open', resolve)
      f.ws.addEventListener('error', () => reject(new Error('socket error')))
    })
    f.ws.send(JSON.stringify({ type: 'auth', key: org.adminKey }))
    assert.equal((await f.answer()).type, 'ready')
    return f
  }

  /** The next message that is not an event (`ready`, `filter`, `error`). */
  async answer (): Promise<any> {
    return await eventually(() => {
      for (; this.taken < this.received.length; this.taken++) {
        const m = this.received[this.taken]
        if (m.type === 'ready' || m.type === 'filter' || m.type === 'error') { this.taken++; return m }
      }
      assert.notEqual(this.ws.readyState, WebSocket.CLOSED, 'the socket closed')
      return undefined
    }, 'an answer on the socket')
  }

  async filter (f: Record<string, unknown>): Promise<any> {
    this.ws.send(JSON.stringify({ type: 'filter', ...f }))
    return await this.answer()
  }

  events (): any[] { return this.received.filter((m) => typeof m.id === 'string' && m.data !== undefined) }

  async delivered (messageId: string): Promise<any> {
    return await eventually(() => this.events().find((e) => e.type === 'delivered' && e.data.message_id === messageId),
      `delivered ${messageId} on the socket`)
  }
}

async function sent (stream?: string): Promise<string> {
  const r = await ob.request('POST', '/v1/messages/send', {
    key: org.adminKey,
    body: {
      from: `App <app@${org.domain}>`, to: `user${++n}@dest.example`, subject: 'Hi', text: 'Hello',
      ...(stream !== undefined ? { stream } : {})
    }
  })
  assert.equal(r.status, 202, r.text)
  return r.body.id as string
}

test('a filter with a stream forwards only that stream\'s events; a bad or foreign stream is an error naming stream', async () => {
  const news = await Feed.open()
  const transactional = await Feed.open()
  const all = await Feed.open()

  const http = await ob.request('GET', '/v1/events?stream=Not-A-Stream', { key: org.adminKey })
  assert.equal(http.status, 400, http.text)
  const bad = await news.filter({ stream: 'Not-A-Stream' })
  assert.deepEqual(bad, { type: 'error', code: 'validation_error', field: 'stream', message: http.body.error.errors[0].message })
  for (const id of ['promo', 'nothing']) {
    const read = await ob.request('GET', `/v1/events?stream=${id}`, { key: org.adminKey })
    assert.equal(read.status, 422, read.text)
    assert.deepEqual(await news.filter({ stream: id }), {
      type: 'error', code: 'stream_not_found', field: 'stream', message: `${id} is not a message stream of this organisation`
    }, `${id}: another organisation's, and none's`)
    assert.deepEqual([read.body.error.code, read.body.error.field, read.body.error.message], ['stream_not_found', 'stream',
      `${id} is not a message stream of this organisation`], 'the HTTP read answers the same code, field and message')
  }
  const chosen = await news.filter({ stream: 'news' })
  assert.equal(chosen.stream, 'news')
  assert.equal(chosen.environment, 'live')
  assert.deepEqual(await transactional.filter({ stream: 'transactional', types: ['delivered'] }),
    { type: 'filter', types: ['delivered'], environment: 'live', stream: 'transactional' })

  const tx = await sent()
  const nw = await sent('news')
  await all.delivered(tx)
  await all.delivered(nw)
  assert.equal((await news.delivered(nw)).data.stream, 'news')
  assert.equal((await transactional.delivered(tx)).data.stream, 'transactional')
  // one more on news: the socket has it only after everything published before, so nothing of `tx` can still come
  const marker = await sent('news')
  await news.delivered(marker)
  await transactional.delivered(await sent())
  assert.ok(news.events().every((e) => e.data.stream === 'news'), JSON.stringify(news.events()))
  assert.ok(!news.events().some((e) => e.data.message_id === tx))
  assert.ok(transactional.events().every((e) => e.type === 'delivered' && e.data.stream === 'transactional'))
  assert.ok(!transactional.events().some((e) => e.data.message_id === nw || e.data.message_id === marker))

  // `null` lifts the stream filter
  const lifted = await news.filter({ stream: null })
  assert.equal(lifted.stream, undefined)
  await news.delivered(await sent())
  for (const f of [news, transactional, all]) f.ws.close()
})
