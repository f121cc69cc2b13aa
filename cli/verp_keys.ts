import { VerpKeyError, type VerpKeyRecord } from '../stores/control_plane/mod.ts'
import { CliError } from './binaries.ts'
import { withControlPlane } from './control_plane_session.ts'
import { VERP_KEYS_USAGE } from './usage.ts'

export type VerpKeyView = Omit<VerpKeyRecord, 'secret'>

/**
 * `outbox verp-keys`: the keys that sign return paths (VERP), against the configured NATS. `rotate` adds a key that
 * signs from then on; the older ones keep verifying until retired. Secrets are never printed, nor recorded: the audit
 * log of the installation has each rotation and retirement by key id.
 */
export async function runVerpKeys (
  args: string[], env: Readonly<Record<string, string | undefined>>
): Promise<VerpKeyView[] | VerpKeyView | { retired: string }> {
  const [action, id, ...extra] = args
  const valid = extra.length === 0 &&
    ((action === 'list' || action === 'rotate') ? id === undefined : action === 'retire' && id !== undefined)
  if (!valid) throw new CliError(`outbox: ${VERP_KEYS_USAGE}`, 2)
  return await withControlPlane(env, VERP_KEYS_USAGE, async (cp, audit) => {
    try {
      const view = (k: VerpKeyRecord): VerpKeyView => ({ id: k.id, created_at: k.created_at })
      if (action === 'list') return cp.verpKeys.list().map(view)
      if (action === 'rotate') {
        const added = await cp.verpKeys.rotate()
        await audit.cliOnly('verp-keys rotate', { org_id: null, target: added.id })
        return added
      }
      await cp.verpKeys.retire(id!)
      await audit.cliOnly('verp-keys retire', { org_id: null, target: id! })
      return { retired: id! }
    } catch (err) {
      if (err instanceof VerpKeyError) throw new CliError(`outbox: ${err.message}`)
      throw err
    }
  })
}
