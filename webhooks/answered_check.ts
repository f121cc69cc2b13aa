import type { DeliveryLog, WebhookEnvelope } from '../stores/webhooks/mod.ts'

/**
 * Whether a webhook already answered an event with a 2xx (the delivery log's received sets), asked only for work
 * JetStream handed out again: the engine that held it stopped before acknowledging it, or it waited past its ack wait
 * while the engine was behind. Such an event is not posted a second time. The questions of one event-loop turn go to
 * Redis as one pipeline; when Redis cannot answer, the event is posted (at least once).
 */
export class AnsweredCheck {
  private pending: Array<{ item: { webhookId: string, eventId: string, ms: number }, resolve: (answered: boolean) => void }> = []

  constructor (private readonly log: Pick<DeliveryLog, 'answered'>) {}

  answered (webhookId: string, event: Pick<WebhookEnvelope, 'id' | 'timestamp'>): Promise<boolean> {
    return new Promise((resolve) => {
      this.pending.push({ item: { webhookId, eventId: event.id, ms: Date.parse(event.timestamp) }, resolve })
      if (this.pending.length === 1) setImmediate(() => { this.flush() })
    })
  }

  private flush (): void {
    const batch = this.pending
    this.pending = []
    this.log.answered(batch.map((b) => b.item)).then(
      (flags) => { batch.forEach((b, i) => { b.resolve(flags[i] === true) }) },
      () => { for (const b of batch) b.resolve(false) }
    )
  }
}
