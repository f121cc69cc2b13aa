import { pino } from 'pino';
import { loadConfig } from '../../config/mod.js';
import { startOutbox } from '../../cli/outbox_process.js';
/**
 * A gateway in its own process, for tests that run several behind one NATS and Redis: settings from the
 * environment as in production, OB_ROLE forced to `gateway`, a free HTTP port unless one is set.
 * Prints `ready <port>` on stdout once it serves; SIGTERM drains and exits.
 */
const config = loadConfig({ OB_HTTP_PORT: '0', OB_SMTP_SUBMISSION_PORT: '0', ...process.env, OB_ROLE: 'gateway' });
const log = pino({ level: process.env.OB_TEST_LOG ?? 'silent' });
const proc = await startOutbox(config, log);
process.stdout.write(`ready ${proc.gateway.port}\n`);
process.once('SIGTERM', () => {
    void proc.stop().then(() => process.exit(0));
});
//# sourceMappingURL=gateway_child.js.map