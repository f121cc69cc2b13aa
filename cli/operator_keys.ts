import { parseArgs } from 'node:util'
import { operatorKeyView, type OperatorKeyView } from '../stores/control_plane/mod.ts'
import { CliError } from './binaries.ts'
import { withControlPlane } from './control_plane_session.ts'
import { OPERATOR_KEY_USAGE } from './usage.ts'

/**
 * `outbox operator key …`: keys of the operator role, which reach only the operator API (`/v1/operator/…`). `create`
 * prints the value once; only its SHA-256 is stored. `revoke` stops it at once, in every gateway. Both are recorded
 * in the installation's audit log (`operator_key.created`, `operator_key.revoked`), by id and name, never the value.
 */
export async function runOperatorKey (
  args: string[], env: Readonly<Record<string, string | undefined>>
): Promise<{ id: string, key: string } | OperatorKeyView[] | OperatorKeyView> {
  const [action, ...rest] = args
  const usage = (why: string): CliError => new CliError(`outbox: ${why}\n${OPERATOR_KEY_USAGE}`, 2)
  if (action === 'create') {
    let name: string
    try {
      name = parseArgs({ args: rest, options: { name: { type: 'string' } }, strict: true }).values.name?.trim() ?? 'operator'
    } catch (err) {
      throw usage((err as Error).message)
    }
    if (name === '' || name.length > 200) throw usage('--name must be 1 to 200 characters')
    return await withControlPlane(env, OPERATOR_KEY_USAGE, async (cp, audit) => {
      const { record, value } = await cp.operatorKeys.create(name)
      await audit.cliOnly('operator key create', { org_id: null, target: record.id, changes: { name } })
      return { id: record.id, key: value }
    })
  }
  if (action === 'list' && rest.length === 0) {
    return await withControlPlane(env, OPERATOR_KEY_USAGE, async (cp) => cp.operatorKeys.list().map(operatorKeyView))
  }
  if (action === 'revoke' && rest.length === 1) {
    const id = rest[0]!
    return await withControlPlane(env, OPERATOR_KEY_USAGE, async (cp, audit) => {
      const revoked = await cp.operatorKeys.revoke(id)
      if (revoked === undefined) throw new CliError(`outbox: no operator key ${id}`)
      await audit.cliOnly('operator key revoke', { org_id: null, target: id })
      return operatorKeyView(revoked)
    })
  }
  throw usage(action === undefined ? 'say what to do with operator keys' : `unknown arguments "${args.join(' ')}"`)
}
