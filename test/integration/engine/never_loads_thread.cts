/** A shard thread entry that cannot even be required: every thread started on it fails before it is ready. */
throw new Error('this shard thread entry cannot be loaded')
