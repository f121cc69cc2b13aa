import { streamTable } from './jetstream_streams.js';
import { consumerTable } from './jetstream_consumers.js';
/**
 * Every JetStream stream and durable consumer of an installation, with its settings: data only. `ensureJetStream`
 * (jetstream_ensure.ts) creates what is missing and brings what exists to these settings; docs/operations.md lists
 * the same entries and a unit test keeps the two equal.
 *
 * The table is assembled here from its parts, one file each: the streams (jetstream_streams.ts), the consumers
 * (jetstream_consumers.ts) and the buckets' settings (jetstream_buckets.ts), on the shapes of jetstream_specs.ts.
 * This file re-exports them all, so importers read the table from one place.
 */
export * from './jetstream_specs.js';
export * from './jetstream_streams.js';
export * from './jetstream_consumers.js';
export * from './jetstream_buckets.js';
export function jetStreamTable(s) {
    return { streams: streamTable(s), consumers: consumerTable(s) };
}
/** The entries one part of a process ensures. */
export function tablePart(table, ...parts) {
    return {
        streams: table.streams.filter((e) => parts.includes(e.part)),
        consumers: table.consumers.filter((e) => parts.includes(e.part))
    };
}
//# sourceMappingURL=jetstream_table.js.map