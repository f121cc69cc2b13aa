import { jetstreamManager } from '@nats-io/jetstream'
import { loadConfig } from '../config/mod.ts'
import { ApiError, streamSettings } from '../protocol/mod.ts'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { AuditLog } from '../stores/audit/mod.ts'
import { JsPublisher, connectNats, ensureStreams } from '../stores/clients/mod.ts'
import { CliError } from './binaries.ts'
import { CliAuditTrail } from './audit_trail.ts'

/**
 * Runs `work` against the control plane of the configured NATS (creating streams and buckets that do not exist yet),
 * then closes it. An ApiError of the control plane's writers becomes one line: exit 2 for input the shared checks
 * refuse (each bad field named), 1 for the rest (not found, in use, no NATS). A command that changes configuration
 * records its entry in the audit log with `audit`, after the change (docs/audit-log.md).
 */
export async function withControlPlane<T> (
  env: Readonly<Record<string, string | undefined>>, usage: string, work: (cp: ControlPlane, audit: CliAuditTrail) => Promise<T>
): Promise<T> {
  const config = loadConfig(env)
  const nc = await connectNats(config.nats.servers, 'outbox-cli').catch(() => {
    throw new CliError(`outbox: no NATS server answers at ${config.nats.servers.join(',')}; start Outbox first (npm start) or set NATS_URL`)
  })
  let cp: ControlPlane | undefined
  try {
    await ensureStreams(nc, streamSettings(config))
    cp = await ControlPlane.open(nc, {
      replicas: config.nats.replicas, storeBytes: config.nats.storeBytes, ...(config.secret !== undefined ? { secret: config.secret } : {})
    })
    const audit = new CliAuditTrail(async () => new AuditLog(await jetstreamManager(nc), new JsPublisher(nc, config.nats.publishTimeoutMs)))
    return await work(cp, audit)
  } catch (err) {
    if (err instanceof ApiError && err.code === 'validation_error') {
      const fields = (err.errors ?? []).map((e) => `${e.field} ${e.message}`).join('; ')
      throw new CliError(`outbox: ${fields === '' ? err.message : fields}\n${usage}`, 2)
    }
    if (err instanceof ApiError) throw new CliError(`outbox: ${err.message}`)
    throw err
  } finally {
    cp?.close()
    await nc.drain().catch(() => {})
  }
}
