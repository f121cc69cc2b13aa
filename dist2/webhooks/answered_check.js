import { TurnBatch } from '../stores/batching/mod.js';
/**
 * Whether a webhook already answered an event with a 2xx (the delivery log's received sets), asked only for work
 * JetStream handed out again: the engine that held it stopped before acknowledging it, or it waited past its ack wait
 * while the engine was behind. Such an event is not posted a second time. The questions of one event-loop turn go to
 * Redis as one pipeline; when Redis cannot answer, the event is posted (at least once).
 */
export class AnsweredCheck {
    log;
    batch;
    constructor(log) {
        this.log = log;
        this.batch = new TurnBatch({ flush: async (questions) => await this.ask(questions) });
    }
    answered(webhookId, event) {
        return this.batch.add({ webhookId, eventId: event.id, ms: Date.parse(event.timestamp) });
    }
    async ask(questions) {
        try {
            const flags = await this.log.answered(questions);
            return questions.map((_q, i) => flags[i] === true);
        }
        catch {
            return questions.map(() => false);
        }
    }
}
//# sourceMappingURL=answered_check.js.map