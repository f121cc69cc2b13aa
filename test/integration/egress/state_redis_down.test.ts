import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ServerProcess } from '../../helpers/servers.ts'
import { fillRedis } from '../../helpers/own_redis.ts'
import { EgressState } from '../../../stores/egress/mod.ts'
import { engineRedis } from './engine_clients.ts'

/**
 * Shaping is a courtesy to receivers, not a reason to stop delivering: with Redis stopped every gate says go within
 * the client's command timeout (1 s, as the engine's shard threads set it), and nothing throws but the operators'
 * snapshot; with Redis full the send and warm-up gates say go while the connection cap keeps working.
 */

async function timed<T> (p: Promise<T>): Promise<{ value: T, ms: number }> {
  const start = Date.now()
  const value = await p
  return { value, ms: Date.now() - start }
}

test('with Redis stopped every gate answers go quickly, writes are dropped, and only the snapshot rejects', async () => {
  const server = await ServerProcess.redis()
  const redis = await engineRedis(server.url)
  const errors: unknown[] = []
  const state = new EgressState(redis, Date.now, { onError: (err) => errors.push(err) })
  try {
    assert.equal((await state.takeSend('ip-a|google', 600)).kind, 'go') // the scripts are loaded while Redis runs
    await server.stop()
    const lane = 'ip-a|google'
    const answers = [
      await timed(state.takeSend(lane, 600)),
      await timed(state.takeWarmup('ip-a', 'google', { perDay: 0, perHour: 0 })),
      await timed(state.acquireConnection(lane, 'h1', 0, 1000)),
      await timed(state.applyReply(lane, { kind: 'pause', ms: 60_000 }, 'r')),
      await timed(state.throttle(lane)),
      await timed(state.renewConnections([{ lane, holder: 'h1' }], 1000)),
      await timed(state.releaseConnection(lane, 'h1')),
      await timed(state.refundWarmup('ip-a', 'google')),
      await timed(state.noteWaiting(lane, 'm1')),
      await timed(state.clearWaiting(lane, 'm1'))
    ]
    assert.deepEqual(answers.map((a) => a.value), [
      { kind: 'go' }, { kind: 'go' }, true,
      { changed: false, throttle: { factor: 1, pausedUntil: 0, outUntil: 0, changedAt: 0, reason: '' } },
      { factor: 1, pausedUntil: 0, outUntil: 0, changedAt: 0, reason: '' },
      undefined, undefined, undefined, undefined, undefined
    ])
    for (const a of answers) assert.ok(a.ms < 2500, `answered after ${a.ms} ms`)
    assert.ok(errors.length >= 10, `${errors.length} failures heard`)
    await assert.rejects(state.snapshot())
  } finally {
    redis.disconnect()
    await server.dispose()
  }
})

test('with Redis full (OOM under noeviction) the send and warm-up gates answer go; the connection cap keeps holding', async () => {
  const server = await ServerProcess.redis()
  const redis = await engineRedis(server.url)
  const errors: unknown[] = []
  try {
    const state = new EgressState(redis, Date.now, { onError: (err) => errors.push(err) })
    await fillRedis(redis)
    // were writes taken, each second call would wait or be refused
    for (let i = 0; i < 3; i++) {
      assert.equal((await state.takeSend('ip-a|google', 60)).kind, 'go')
      assert.equal((await state.takeWarmup('ip-a', 'google', { perDay: 1, perHour: 1 })).kind, 'go')
      assert.equal(await state.acquireConnection('ip-a|google', `h${i}`, 1, 60_000), i === 0)
    }
    await state.releaseConnection('ip-a|google', 'h0')
    assert.equal(await state.acquireConnection('ip-a|google', 'h3', 1, 60_000), true)
    assert.ok(errors.some((err) => /OOM/.test((err as Error).message)), 'the refusals were heard')
  } finally {
    redis.disconnect()
    await server.dispose()
  }
})
