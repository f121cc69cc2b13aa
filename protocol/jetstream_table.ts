import type { ConsumerSpec, JetStreamPart, JetStreamSettings, StreamSpec } from './jetstream_specs.ts'
import { streamTable } from './jetstream_streams.ts'
import { consumerTable } from './jetstream_consumers.ts'

/**
 * Every JetStream stream and durable consumer of an installation, with its settings: data only. `ensureJetStream`
 * (jetstream_ensure.ts) creates what is missing and brings what exists to these settings; docs/operations.md lists
 * the same entries and a unit test keeps the two equal.
 *
 * The table is assembled here from its parts, one file each: the streams (jetstream_streams.ts), the consumers
 * (jetstream_consumers.ts) and the buckets' settings (jetstream_buckets.ts), on the shapes of jetstream_specs.ts.
 * This file re-exports them all, so importers read the table from one place.
 */

export * from './jetstream_specs.ts'
export * from './jetstream_streams.ts'
export * from './jetstream_consumers.ts'
export * from './jetstream_buckets.ts'

export interface JetStreamTable {
  streams: StreamSpec[]
  consumers: ConsumerSpec[]
}

export function jetStreamTable (s: JetStreamSettings): JetStreamTable {
  return { streams: streamTable(s), consumers: consumerTable(s) }
}

/** The entries one part of a process ensures. */
export function tablePart (table: JetStreamTable, ...parts: JetStreamPart[]): JetStreamTable {
  return {
    streams: table.streams.filter((e) => parts.includes(e.part)),
    consumers: table.consumers.filter((e) => parts.includes(e.part))
  }
}
