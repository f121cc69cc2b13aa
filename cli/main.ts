#!/usr/bin/env node
import { CliError } from './binaries.ts'
import {
  EGRESS_USAGE, NATS_USAGE, OPERATOR_KEY_USAGE, ORG_ADMIN_USAGE, ORG_CREATE_USAGE, QUEUE_USAGE, VERP_KEYS_USAGE
} from './usage.ts'

// Each command's module is loaded when the command runs, not before: `outbox start` brings the whole service, and
// a command that only reads or writes the control plane starts in about half the time without it.

const HELP = `outbox: self-hosted transactional email

usage:
  outbox start                 run the parts OB_ROLE names (gateway, engine, inbound or all);
                               starts nats-server and redis-server under OB_DATA_DIR when
                               NATS_URL / REDIS_URL are unset and nothing answers at the defaults
  ${ORG_CREATE_USAGE.replace('usage: ', '')}
                               create an organisation with a verified domain and an admin key;
                               prints {"organization_id","domain_id","api_key"}
  ${ORG_ADMIN_USAGE.replace('usage: ', '').replace(/\n {7}/g, '\n  ')}
                               the organisations: list them (plan, status, counts), show one,
                               set its plan, suspend it (its keys are refused) and resume it,
                               give it a new admin key (the old ones stop), or delete it
                               with its keys, domains and webhooks
  ${NATS_USAGE.replace('usage: ', '')}
                               the JetStream streams (messages, bytes, limits) and their
                               consumers (pending, ack pending, redelivered); read-only
  ${VERP_KEYS_USAGE.replace('usage: ', '')}
                               the keys that sign return paths (VERP): list them (ids, never
                               secrets), add one that signs from now on (the others keep
                               verifying), or retire an older one (its addresses stop working)
  ${OPERATOR_KEY_USAGE.replace('usage: ', '')}
                               keys of the operator API (/v1/operator/…): create prints
                               {"id","key"} once; list shows ids and names, never secrets
  ${EGRESS_USAGE.replace('usage: ', '').replace(/\n {7}/g, '\n  ')}
                               the egress configuration: sources (an address and its EHLO
                               name), pools of weighted sources, which pool an organisation
                               or domain sends from, limit overrides per provider; lanes:
                               each source × provider as it runs (limits, connections,
                               throttle, waiting mail, warm-up)
  ${QUEUE_USAGE.replace('usage: ', '').replace(/\n {7}/g, '\n  ')}
                               waiting mail by recipient domain, provider or organisation
                               (depth, oldest, next attempt, last reply); hold it without
                               spending retries, release it (attempted within 5 s), retry it
                               now, or bounce it (each recipient's bounced event, category
                               operator); hold, release, retry and bounce name the local user
  outbox --help                this text

Settings come from environment variables (OB_*, NATS_URL, REDIS_URL); see docs/configuration.md.
`

const say = (line: string): void => { process.stderr.write(line + '\n') }

/** `--help` after a command prints that command's usage (stdout, exit 0); elsewhere, and after `start`, the whole text. */
function commandUsage (command: string | undefined, sub: string | undefined): string {
  if (command === 'org') return sub === 'create' ? ORG_CREATE_USAGE : ORG_ADMIN_USAGE
  const usages: Record<string, string> = {
    nats: NATS_USAGE, 'verp-keys': VERP_KEYS_USAGE, operator: OPERATOR_KEY_USAGE, egress: EGRESS_USAGE, queue: QUEUE_USAGE
  }
  if (command === undefined || !Object.hasOwn(usages, command)) return HELP.trimEnd()
  return usages[command]! + '\nSettings come from environment variables (OB_*, NATS_URL, REDIS_URL); see docs/configuration.md.'
}

async function main (argv: string[], env: Readonly<Record<string, string | undefined>>): Promise<number> {
  const [command, sub, ...rest] = argv
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP)
    return 0
  }
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(commandUsage(command, sub) + '\n')
    return 0
  }
  if (command === 'start' && sub === undefined) {
    const { runStart } = await import('./start.ts')
    await runStart(env, say)
    return -1 // keeps running; the signal handlers exit
  }
  if (command === 'org' && sub === 'create') {
    const { runOrgCreate } = await import('./org_create.ts')
    const created = await runOrgCreate(rest, env)
    process.stdout.write(JSON.stringify(created) + '\n')
    return 0
  }
  if (command === 'org') {
    const { runOrgAdmin } = await import('./org_admin.ts')
    process.stdout.write(JSON.stringify(await runOrgAdmin(argv.slice(1), env)) + '\n')
    return 0
  }
  if (command === 'nats') {
    const { runNats } = await import('./nats_inspect.ts')
    process.stdout.write(JSON.stringify(await runNats(argv.slice(1), env)) + '\n')
    return 0
  }
  if (command === 'operator' && sub === 'key') {
    const { runOperatorKey } = await import('./operator_keys.ts')
    process.stdout.write(JSON.stringify(await runOperatorKey(rest, env)) + '\n')
    return 0
  }
  if (command === 'egress') {
    const { runEgress } = await import('./egress.ts')
    process.stdout.write(JSON.stringify(await runEgress(argv.slice(1), env)) + '\n')
    return 0
  }
  if (command === 'queue') {
    const { runQueue } = await import('./queues.ts')
    process.stdout.write(JSON.stringify(await runQueue(argv.slice(1), env)) + '\n')
    return 0
  }
  if (command === 'verp-keys') {
    const { runVerpKeys } = await import('./verp_keys.ts')
    const result = await runVerpKeys(argv.slice(1), env)
    process.stdout.write(JSON.stringify(result) + '\n')
    return 0
  }
  say(command === undefined ? HELP.trimEnd() : `outbox: unknown command "${argv.join(' ')}"; see outbox --help`)
  return 2
}

// The CLI is the one place besides config/load.ts that sees the environment: it hands it down whole.
main(process.argv.slice(2), process.env).then((code) => {
  if (code >= 0) process.exitCode = code
}, (err: unknown) => {
  if (err instanceof CliError) say(err.message)
  else say(`outbox: ${(err as Error)?.message ?? String(err)}`)
  process.exit(err instanceof CliError ? err.exitCode : 1)
})
