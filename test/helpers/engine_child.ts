import { pino } from 'pino'
import { loadConfig } from '../../config/mod.ts'
import { startOutbox } from '../../cli/outbox_process.ts'

/**
 * An engine in its own process, for tests that kill it: settings from the environment as in production,
 * OB_ROLE forced to `engine`, metrics on a free port unless one is set. Prints `ready` on stdout once it
 * consumes; SIGTERM drains and exits.
 */
const config = loadConfig({ OB_METRICS_PORT: '0', ...process.env, OB_ROLE: 'engine' })
const log = pino({ level: process.env.OB_TEST_LOG ?? 'silent' })
const proc = await startOutbox(config, log)
process.stdout.write('ready\n')
process.once('SIGTERM', () => {
  void proc.stop().then(() => process.exit(0))
})
