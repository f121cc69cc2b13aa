import { TurnBatch } from '../stores/batching/mod.ts'
import type { DeliveryLog, WebhookEnvelope } from '../stores/webhooks/mod.ts'

interface Question { webhookId: string, eventId: string, ms: number }

/**
 * Whether a webhook already answered an event with a 2xx (the delivery log's received sets), asked only for work
 * JetStream handed out again: the engine that held it stopped before acknowledging it, or it waited past its ack wait
 * while the engine was behind. Such an event is not posted a second time. The questions of one event-loop turn go to
 * Redis as one pipeline; when Redis cannot answer, the event is posted (at least once).
 */
export class AnsweredCheck {
  private readonly batch: TurnBatch<Question, boolean>

  constructor (private readonly log: Pick<DeliveryLog, 'answered'>) {
    this.batch = new TurnBatch({ flush: async (questions) => await this.ask(questions) })
  }

  answered (webhookId: string, event: Pick<WebhookEnvelope, 'id' | 'timestamp'>): Promise<boolean> {
    return this.batch.add({ webhookId, eventId: event.id, ms: Date.parse(event.timestamp) })
  }

  private async ask (questions: Question[]): Promise<boolean[]> {
    try {
      const flags = await this.log.answered(questions)
      return questions.map((_q, i) => flags[i] === true)
    } catch {
      return questions.map(() => false)
    }
  }
}
