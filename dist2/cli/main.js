#!/usr/bin/env node
import { ConfigError } from '../config/mod.js';
import { CliError } from './binaries.js';
import { runStart } from './start.js';
import { runOrgCreate, ORG_CREATE_USAGE } from './org_create.js';
import { runVerpKeys, VERP_KEYS_USAGE } from './verp_keys.js';
const HELP = `outbox: self-hosted transactional email

usage:
  outbox start                 run the parts OB_ROLE names (gateway, engine, inbound or all);
                               starts nats-server and redis-server under OB_DATA_DIR when
                               NATS_URL / REDIS_URL are unset and nothing answers at the defaults
  ${ORG_CREATE_USAGE.replace('usage: ', '')}
                               create an organisation with a verified domain and an admin key;
                               prints {"organization_id","domain_id","api_key"}
  ${VERP_KEYS_USAGE.replace('usage: ', '')}
                               the keys that sign return paths (VERP): list them (ids, never
                               secrets), add one that signs from now on (the others keep
                               verifying), or retire an older one (its addresses stop working)
  outbox --help                this text

Settings come from environment variables (OB_*, NATS_URL, REDIS_URL); see docs/configuration.md.
`;
const say = (line) => { process.stderr.write(line + '\n'); };
async function main(argv, env) {
    const [command, sub, ...rest] = argv;
    if (command === '--help' || command === '-h' || command === 'help') {
        process.stdout.write(HELP);
        return 0;
    }
    if (command === 'start' && sub === undefined) {
        await runStart(env, say);
        return -1; // keeps running; the signal handlers exit
    }
    if (command === 'org' && sub === 'create') {
        const created = await runOrgCreate(rest, env);
        process.stdout.write(JSON.stringify(created) + '\n');
        return 0;
    }
    if (command === 'verp-keys') {
        const result = await runVerpKeys(argv.slice(1), env);
        process.stdout.write(JSON.stringify(result) + '\n');
        return 0;
    }
    say(command === undefined ? HELP.trimEnd() : `outbox: unknown command "${argv.join(' ')}"; see outbox --help`);
    return 2;
}
// The CLI is the one place besides config/load.ts that sees the environment: it hands it down whole.
main(process.argv.slice(2), process.env).then((code) => {
    if (code >= 0)
        process.exitCode = code;
}, (err) => {
    if (err instanceof ConfigError)
        say(`outbox: ${err.message}`);
    else if (err instanceof CliError)
        say(err.message);
    else
        say(`outbox: ${err?.message ?? String(err)}`);
    process.exit(err instanceof CliError ? err.exitCode : 1);
});
//# sourceMappingURL=main.js.map