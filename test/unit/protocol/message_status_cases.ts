import type { MessageStatus, RecipientCounts } from '../../../protocol/mod.ts'

/**
 * The message-status rule as a table: recipients, counts per recipient status, base status, expected message status.
 * message_status.test.ts checks protocol's messageStatusOf against it; the read-model test runs the Redis Lua over it.
 */
export const MESSAGE_STATUS_CASES: ReadonlyArray<{ name: string, input: RecipientCounts, status: MessageStatus | undefined }> = [
  { name: 'not recorded yet', input: { recipients: 0, counts: {}, base: 'queued' }, status: undefined },
  { name: 'no outcome yet', input: { recipients: 2, counts: {}, base: 'queued' }, status: 'queued' },
  { name: 'scheduled, no outcome yet', input: { recipients: 1, counts: {}, base: 'scheduled' }, status: 'scheduled' },
  { name: 'every recipient delivered', input: { recipients: 2, counts: { delivered: 2 }, base: 'queued' }, status: 'delivered' },
  { name: 'one delivered, one not attempted', input: { recipients: 2, counts: { delivered: 1 }, base: 'queued' }, status: 'sending' },
  { name: 'one bounced, one not attempted', input: { recipients: 2, counts: { bounced: 1 }, base: 'queued' }, status: 'sending' },
  { name: 'one bounced, one retried', input: { recipients: 2, counts: { bounced: 1, deferred: 1 }, base: 'queued' }, status: 'deferred' },
  {
    name: 'one delivered, one retried',
    input: { recipients: 2, counts: { delivered: 1, deferred: 1 }, base: 'queued' },
    status: 'deferred'
  },
  { name: 'one retried, one not attempted', input: { recipients: 2, counts: { deferred: 1 }, base: 'queued' }, status: 'deferred' },
  { name: 'two delivered, one bounced', input: { recipients: 3, counts: { delivered: 2, bounced: 1 }, base: 'queued' }, status: 'bounced' },
  { name: 'bounced over complained', input: { recipients: 2, counts: { complained: 1, bounced: 1 }, base: 'queued' }, status: 'bounced' },
  { name: 'complained over failed', input: { recipients: 2, counts: { complained: 1, failed: 1 }, base: 'queued' }, status: 'complained' },
  { name: 'failed over delivered', input: { recipients: 2, counts: { delivered: 1, failed: 1 }, base: 'queued' }, status: 'failed' },
  { name: 'complained (delivered first)', input: { recipients: 1, counts: { complained: 1 }, base: 'queued' }, status: 'complained' },
  {
    name: 'one delivered, one suppressed',
    input: { recipients: 2, counts: { delivered: 1, suppressed: 1 }, base: 'queued' },
    status: 'delivered'
  },
  { name: 'one suppressed, one not attempted', input: { recipients: 2, counts: { suppressed: 1 }, base: 'queued' }, status: 'queued' },
  {
    name: 'one suppressed, one scheduled', input: { recipients: 2, counts: { suppressed: 1 }, base: 'scheduled' }, status: 'scheduled'
  },
  {
    name: 'one suppressed, one retried',
    input: { recipients: 2, counts: { suppressed: 1, deferred: 1 }, base: 'queued' },
    status: 'deferred'
  },
  {
    name: 'one suppressed, one bounced, one not attempted',
    input: { recipients: 3, counts: { suppressed: 1, bounced: 1 }, base: 'queued' },
    status: 'sending'
  }
]
