import { parseArgs } from 'node:util'
import { loadConfig } from '../config/mod.ts'
import { QUEUE_SELECTOR_KINDS, normalizeSelector, type QueueActor, type QueueSelector, type QueueSelectorKind } from '../protocol/mod.ts'
import type { ControlPlane } from '../stores/control_plane/mod.ts'
import { connectNats, newRedis } from '../stores/clients/mod.ts'
import { QueueIndex, wakeWaiting } from '../stores/queues/mod.ts'
import { CliError } from './binaries.ts'
import { withControlPlane } from './control_plane_session.ts'
import { localUserName } from './audit_trail.ts'
import { QUEUE_USAGE } from './usage.ts'

type Env = Readonly<Record<string, string | undefined>>

function usage (why: string): CliError {
  return new CliError(`outbox: ${why}\n${QUEUE_USAGE}`, 2)
}

interface Parsed { values: Record<string, string | boolean | undefined>, positionals: string[] }

function options (args: string[]): Parsed {
  try {
    const parsed = parseArgs({
      args,
      options: {
        domain: { type: 'string' }, provider: { type: 'string' }, org: { type: 'string' }, reason: { type: 'string' },
        'only-held': { type: 'boolean' }, by: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' }
      },
      strict: true,
      allowPositionals: false
    }) as Parsed
    return parsed
  } catch (err) {
    throw usage((err as Error).message)
  }
}

/** The one selector of `--domain`, `--provider` or `--org`, checked as the operator API checks it. */
function selectorOf (v: Parsed['values']): QueueSelector {
  const given = ([['domain', v.domain], ['provider', v.provider], ['organization', v.org]] as const).filter(([, x]) => x !== undefined)
  if (given.length !== 1) throw usage('name exactly one of --domain, --provider or --org')
  const { selector, errors } = normalizeSelector({ by: given[0]![0], value: given[0]![1] })
  if (selector === undefined) throw usage(errors.map((e) => `${e.field} ${e.message}`).join('; '))
  return selector
}

/** The CLI has no operator key: the records name the local user who ran it, as its audit entries do. */
function cliActor (): QueueActor {
  return { key_id: null, name: `cli:${localUserName()}` }
}

/**
 * `outbox queue …`: waiting mail by domain, provider or organisation, and the operator's holds and orders on it,
 * written through the same control-plane writer as the operator API (stores/control_plane/queue_holds.ts).
 */
export async function runQueue (args: string[], env: Env): Promise<unknown> {
  const [action, ...rest] = args
  const { values } = options(rest)
  const reason = typeof values.reason === 'string' ? values.reason : undefined
  const run = async <T>(work: (cp: ControlPlane) => Promise<T> | T): Promise<T> =>
    await withControlPlane(env, QUEUE_USAGE, async (cp) => await work(cp))
  switch (action) {
    case 'list': {
      const by = (values.by ?? 'domain') as QueueSelectorKind
      if (!(QUEUE_SELECTOR_KINDS as readonly string[]).includes(by)) throw usage('--by is domain, provider or organization')
      const limit = values.limit === undefined ? 20 : Number(values.limit)
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw usage('--limit is from 1 to 1000')
      const offset = values.cursor === undefined ? 0 : Number(values.cursor)
      if (!Number.isSafeInteger(offset) || offset < 0) throw usage('--cursor is the next_cursor a list printed')
      return await withIndex(env, async (index) => {
        const page = await index.list(by, offset, limit)
        const end = offset + page.data.length
        return { ...page, next_cursor: end < page.total ? String(end) : null }
      })
    }
    case 'holds':
      return await run((cp) => ({ data: cp.queues.holds() }))
    case 'hold': {
      const selector = selectorOf(values)
      return await run(async (cp) => (await cp.queues.putHold(selector, cliActor(), reason)).hold)
    }
    case 'release': {
      const selector = selectorOf(values)
      return await run(async (cp) => ({ released: await cp.queues.releaseHold(selector) }))
    }
    case 'retry':
    case 'bounce': {
      const selector = selectorOf(values)
      const onlyHeld = action === 'bounce' && values['only-held'] === true
      return await run(async (cp) => {
        const order = await cp.queues.putOrder(action, selector, onlyHeld, cliActor(), reason)
        if (onlyHeld) return { order, woken: 0, skipped: 0, more: false }
        const config = loadConfig(env)
        const nc = await connectNats(config.nats.servers, 'outbox-cli')
        try {
          return { order, ...await withIndex(env, async (index) => await wakeWaiting(nc, index, selector, action, order.id)) }
        } finally {
          await nc.drain().catch(() => {})
        }
      })
    }
  }
  throw usage(action === undefined
    ? 'say what to do: list, holds, hold, release, retry or bounce'
    : `unknown arguments "${args.join(' ')}"`)
}

async function withIndex<T> (env: Env, work: (index: QueueIndex) => Promise<T>): Promise<T> {
  const redis = newRedis(loadConfig(env).redis.target, { connectionName: 'outbox-cli', maxRetriesPerRequest: 1, commandTimeout: 5000 })
  redis.on('error', () => {})
  try {
    return await work(new QueueIndex(redis))
  } finally {
    redis.disconnect()
  }
}
