/**
 * Each command's usage line, apart from the commands themselves: `outbox --help` and the dispatch in main.ts read these
 * without loading any command, and a command loads only its own modules (a CLI call starts in about half the time).
 */

export const EGRESS_USAGE = `usage: outbox egress source add <name> --address <ip> --ehlo <host> [--warmup]
       outbox egress source list | source remove <name>
       outbox egress pool set <name> <source>[:<weight>]... | pool list | pool remove <name>
       outbox egress assign --org <org_id> [--domain <domain_id> | --stream <stream_id>] (--pool <name>|default | --inherit)
       outbox egress limits set <provider>|default [--source <name>] <key>=<value>... | limits show [--source <name>]
       outbox egress lanes`

export const NATS_USAGE = 'usage: outbox nats streams | nats consumers [<stream>]'

export const OPERATOR_KEY_USAGE = 'usage: outbox operator key create [--name <name>] | list | revoke <key_id>'

export const ORG_ADMIN_USAGE = `usage: outbox org list [--status active|suspended] | org show <org_id>
       outbox org plan <org_id> free|starter|pro|enterprise [--rate-limit <per_minute>]
       outbox org suspend <org_id> | org resume <org_id> | org reset-admin-key <org_id>
       outbox org delete <org_id> --yes`

export const ORG_CREATE_USAGE = 'usage: outbox org create --name <name> --domain <domain> [--plan free|starter|pro|enterprise]'

export const QUEUE_USAGE = `usage: outbox queue list [--by domain|provider|organization] [--limit <n>] [--cursor <c>]
       outbox queue holds
       outbox queue hold|release (--domain <d> | --provider <p> | --org <org_id>) [--reason <text>]
       outbox queue retry (--domain <d> | --provider <p> | --org <org_id>) [--reason <text>]
       outbox queue bounce (--domain <d> | --provider <p> | --org <org_id>) [--only-held] [--reason <text>]`

export const VERP_KEYS_USAGE = 'usage: outbox verp-keys list | rotate | retire <key_id>'
