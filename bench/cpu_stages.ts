/**
 * The stages of Outbox's delivery path, and which code belongs to which: the one table the CPU budget
 * (bench/cpu_budget.ts) attributes profile samples with. A sample's stack is walked from the leaf to the root;
 * the first frame in Outbox's own code (a url with /dist/ and without node_modules) that a row of OWN_CODE names
 * decides. Frames of shared plumbing (SHARED_CODE: protocol functions, the JetStream publisher, the batchers) are
 * passed over so that their caller decides (a publish from the gateway's send is the queued message's publish,
 * one from the event publisher an event's); they decide only when no caller of theirs is on the stack (a PubAck
 * arriving, a batch flushed by its timer). A stack with no Outbox frame goes by the first package frame PACKAGES
 * names, then by the first frame of Node's own code NODE_CODE names, then by the leaf's V8 name.
 */
export type Stage =
  | 'gateway: parse, auth, validate, accept'
  | 'JetStream publish of the queued message'
  | 'read-model write (gateway and engine)'
  | 'message content record'
  | 'engine: pull and hand-off to a shard thread'
  | 'MIME composition'
  | 'DKIM: header canonicalisation, body hash'
  | 'DKIM: sign() of both keys'
  | 'SMTP client'
  | 'outcome record'
  | 'event publish'
  | 'projector (read model from events)'
  | 'webhook fan-out'
  | 'webhook sign and POST'
  | 'webhook delivery log'
  | 'PubAck matching (every JetStream publish)'
  | 'batched Redis writes, flushed by timer'
  | 'Outbox other (control plane, metrics, leases, sweeps)'
  | 'garbage collection'
  | 'NATS client (parsing, socket reads and writes)'
  | 'Redis client'
  | 'Node sockets and streams'
  | 'Node timers and microtasks'
  | 'native code, no JavaScript on the stack (program)'
  | 'other'

/** Every stage, in the order the budget lists them (the delivery path first, then the machinery under it). */
export const STAGES: readonly Stage[] = [
  'gateway: parse, auth, validate, accept', 'JetStream publish of the queued message', 'read-model write (gateway and engine)',
  'message content record', 'engine: pull and hand-off to a shard thread', 'MIME composition',
  'DKIM: header canonicalisation, body hash', 'DKIM: sign() of both keys', 'SMTP client',
  'outcome record', 'event publish', 'projector (read model from events)', 'webhook fan-out', 'webhook sign and POST',
  'webhook delivery log', 'PubAck matching (every JetStream publish)', 'batched Redis writes, flushed by timer',
  'Outbox other (control plane, metrics, leases, sweeps)', 'garbage collection', 'NATS client (parsing, socket reads and writes)',
  'Redis client', 'Node sockets and streams', 'Node timers and microtasks', 'native code, no JavaScript on the stack (program)', 'other'
]

/**
 * A row: files under dist/ (a path pattern), optionally only some of their functions, or only while the frames
 * between the leaf and this one (their url and name) match `below`.
 */
interface Row { stage: Stage, file: RegExp, fn?: RegExp, below?: RegExp }

/**
 * DKIM's `sign()` calls, RSA-2048 and ed25519 alike: both run in one function (V8 keeps no caller line), so the profile
 * cannot tell them apart; the budget splits this stage by the two algorithms' costs measured beside the run.
 */
export const DKIM_SIGN: Stage = 'DKIM: sign() of both keys'

/** Outbox's own modules, by the path under dist/; the first row that matches a frame decides. */
const OWN_CODE: readonly Row[] = [
  // the node:crypto sign() of each DKIM key (RSA and ed25519 alike, split afterwards); everything else of dkim.js
  // is the header selection and canonicalisation and the relaxed body hash shared by both signatures
  { stage: DKIM_SIGN, file: /^engine\/actor\/dkim\.js$/, below: /crypto\/sig|signOneShot/ },
  { stage: 'DKIM: header canonicalisation, body hash', file: /^engine\/actor\/dkim\.js$/ },
  // compose once per message, splice per recipient; tracking links and tokens; a template's rendering
  {
    stage: 'MIME composition',
    file: /^engine\/(actor\/(compose|mime|tracking|raw_submission)|processing\/rendered_content|template_source|inline_images)\.js$/
  },
  // the SMTP pools and their sockets, MX, destination throttles, egress lanes, the send fence, reply classification
  { stage: 'SMTP client', file: /^engine\/(actor\/(deliver|transports|fenced_sends|mx|throttle|classify)|egress\/.*|tls\/.*)\.js$/ },
  // the pull loop, the processor's reading and planning of a message, piscina's task hand-off to the shard thread
  {
    stage: 'engine: pull and hand-off to a shard thread',
    file: /^(engine\/(dispatcher|shards|queued_ingress|connection_epoch|sandbox|destination_backoff|signing_keys|actor\/(worker|thread|task)|processing\/(delivery_plan|attempts|fate|newer_format))|stores\/threads\/.*)\.c?js$/
  },
  { stage: 'outcome record', file: /^engine\/process_message\.js$/, fn: /^(record|count|suppress)$/ },
  { stage: 'event publish', file: /^engine\/process_message\.js$/, fn: /^(publish|publishRecorded)$/ },
  { stage: 'engine: pull and hand-off to a shard thread', file: /^engine\/process_message\.js$/ },
  // what the outcomes mean, the delivery state (main thread and shard thread), the queue index, retry schedules
  {
    stage: 'outcome record',
    file: /^(engine\/(delivery_state|delivery_state_layout|processing\/outcomes|queue_holds|retry_schedule)|stores\/queues\/.*)\.js$/
  },
  { stage: 'event publish', file: /^(engine\/events_out|stores\/events\/.*)\.js$/ },
  // the content view, gzip-compressed (the gzip itself runs on libuv's pool, outside the profiles) and published
  { stage: 'message content record', file: /^(engine\/(content_recorder|content_view)|stores\/message_content\/.*)\.js$/ },
  // the projector's own store applies events; the rest of the read model's writes are the queued and sent records
  { stage: 'projector (read model from events)', file: /^stores\/read_model\/message_store\.js$/, fn: /^applyEvent$/ },
  { stage: 'projector (read model from events)', file: /^stores\/read_model\/(projector|apply_event_call|apply_backoff|apply_event\.lua)\.js$/ },
  { stage: 'read-model write (gateway and engine)', file: /^(stores\/read_model\/.*|gateway\/send\/read_model_writer|engine\/processing\/intake)\.js$/ },
  // the send route's publish: the queued message encoded (large content apart) and published; room checks
  { stage: 'JetStream publish of the queued message', file: /^gateway\/send\/service\.js$/, fn: /^(publish|encode)$/ },
  { stage: 'JetStream publish of the queued message', file: /^(gateway\/send\/large_content|stores\/clients\/stream_room)\.js$/ },
  { stage: 'gateway: parse, auth, validate, accept', file: /^gateway\/.*\.js$/ },
  { stage: 'webhook delivery log', file: /^(webhooks\/outcome|stores\/webhooks\/delivery_log)\.js$/ },
  { stage: 'webhook sign and POST', file: /^webhooks\/(sign|http_client|ssrf|attempts|endpoints|endpoint_queue|settle|retry)\.js$/ },
  // events read from OB_EVENTS, matched to webhooks, first attempts made at once, jobs written for the rest
  { stage: 'webhook fan-out', file: /^(webhooks\/.*|stores\/webhooks\/.*)\.js$/ }
]

/** Plumbing whose caller decides; the stage given when no caller is on the stack. */
const SHARED_CODE: readonly Row[] = [
  { stage: 'PubAck matching (every JetStream publish)', file: /^stores\/clients\/js_publisher\.js$/ },
  { stage: 'batched Redis writes, flushed by timer', file: /^stores\/(clients\/script_batch|batching\/.*)\.js$/ },
  { stage: 'Outbox other (control plane, metrics, leases, sweeps)', file: /^(protocol|stores\/clients)\/.*\.js$/ }
]

/**
 * Libraries, for stacks without an Outbox frame: the first frame (from the leaf) of a package named here decides,
 * so a socket write the NATS client makes is the NATS client's, one nodemailer makes the SMTP client's.
 */
const PACKAGES: ReadonlyArray<{ stage: Stage, url: RegExp }> = [
  { stage: 'NATS client (parsing, socket reads and writes)', url: /@nats-io\// },
  { stage: 'Redis client', url: /node_modules\/(ioredis|redis-parser|@ioredis|denque|cluster-key-slot)\// },
  { stage: 'SMTP client', url: /node_modules\/nodemailer\// },
  // the only HTTP client Outbox runs under this load is the webhook POST
  { stage: 'webhook sign and POST', url: /node_modules\/undici\/|node:internal\/deps\/undici/ },
  // task and result messages between the main thread and the shard threads
  { stage: 'engine: pull and hand-off to a shard thread', url: /node_modules\/piscina\// },
  { stage: 'gateway: parse, auth, validate, accept', url: /uWebSockets|uws_/ }
]

/** Node's own code, when no package is on the stack either: the first frame (from the leaf) named here decides. */
const NODE_CODE: ReadonlyArray<{ stage: Stage, url: RegExp }> = [
  // the content record's gzip, whose stream events run with no caller on the stack (the only zlib on the path)
  { stage: 'message content record', url: /^node:zlib$/ },
  { stage: 'engine: pull and hand-off to a shard thread', url: /^node:internal\/(worker|per_context\/messageport)/ },
  { stage: 'Node sockets and streams', url: /^node:(internal\/)?(net|stream|streams\/|_tls|tls|dns|internal\/tls|internal\/stream_base)/ },
  { stage: 'Node timers and microtasks', url: /^node:(internal\/)?(timers|process\/task_queues|async_hooks)/ }
]

/**
 * V8's pseudo-frames, by function name, when nothing above decided. `(program)` is native code running with no
 * JavaScript frame on the stack: uWebSockets.js parsing HTTP and writing responses, libuv polling and reading sockets.
 */
const V8_NAMES: Readonly<Record<string, Stage>> = {
  '(garbage collector)': 'garbage collection',
  '(program)': 'native code, no JavaScript on the stack (program)'
}

/** The path of an Outbox module under dist/ (`engine/actor/dkim.js`), or undefined for any other code. */
export function outboxPath (url: string): string | undefined {
  if (url.includes('node_modules')) return undefined
  const at = url.lastIndexOf('/dist/')
  return at < 0 ? undefined : url.slice(at + '/dist/'.length)
}

export interface Frame { functionName: string, url: string }

function rowOf (rows: readonly Row[], path: string, fn: string, below: string): Row | undefined {
  return rows.find((r) => r.file.test(path) && (r.fn === undefined || r.fn.test(fn)) && (r.below === undefined || r.below.test(below)))
}

/** The stage of one sample, given its stack from the leaf (index 0) to the root. */
export function stageOf (stack: readonly Frame[]): Stage {
  let shared: Stage | undefined
  let outboxSeen = false
  let below = ''
  for (const f of stack) {
    const path = outboxPath(f.url)
    if (path === undefined) {
      if (!outboxSeen) below += `${f.url} ${f.functionName}\n`
      continue
    }
    outboxSeen = true
    const own = rowOf(OWN_CODE, path, f.functionName, below)
    if (own !== undefined) return own.stage
    shared ??= rowOf(SHARED_CODE, path, f.functionName, below)?.stage ?? 'Outbox other (control plane, metrics, leases, sweeps)'
  }
  if (outboxSeen) return shared!
  for (const rules of [PACKAGES, NODE_CODE]) {
    for (const f of stack) {
      const rule = rules.find((r) => r.url.test(f.url))
      if (rule !== undefined) return rule.stage
    }
  }
  return V8_NAMES[stack[0]?.functionName ?? ''] ?? 'other'
}
