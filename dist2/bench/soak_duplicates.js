import { Redis } from 'ioredis';
import { deliveryStateKey, parseDeliveryState } from '../engine/delivery_state_layout.js';
/** Messages that reached the sink this long before an engine kill are looked up; older ones were recorded long ago. */
const LOOKBACK_MS = 120_000;
/**
 * The bound on repeated SMTP transactions (docs/reliability.md): a message is sent twice after an engine is killed
 * only if the SMTP server had its data but its reply was not yet in the message's delivery state when the engine died.
 * Right after each kill, before the next engine starts, the messages the sink received lately are looked up in the
 * delivery state; those without a recorded reply or outcome are the attempts in flight at that kill.
 */
export class KillAccounting {
    redisUrl;
    sink;
    domain;
    inFlight = new Set();
    /** Attempts in flight at each kill (-1: Redis could not be read then). */
    perKill = [];
    constructor(redisUrl, sink, domain) {
        this.redisUrl = redisUrl;
        this.sink = sink;
        this.domain = domain;
    }
    async afterKill() {
        const since = Date.now() - LOOKBACK_MS;
        const suffix = `@${this.domain}>`;
        const recent = this.sink.messages.filter((m) => m.receivedAt >= since && m.messageId.endsWith(suffix));
        const r = new Redis(this.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 });
        try {
            await r.connect();
            const p = r.pipeline();
            for (const m of recent)
                p.hgetall(deliveryStateKey(m.messageId.slice(1, -suffix.length)));
            const replies = (await p.exec()) ?? [];
            let open = 0;
            recent.forEach((m, i) => {
                const [err, raw] = replies[i] ?? [new Error('no reply'), null];
                if (err !== null)
                    return;
                const s = parseDeliveryState(raw).get(m.rcptTo[0].toLowerCase());
                if (s?.sent === undefined && s?.final === undefined) {
                    this.inFlight.add(m.messageId);
                    open++;
                }
            });
            this.perKill.push(open);
        }
        catch {
            this.perKill.push(-1);
        }
        finally {
            r.disconnect();
        }
    }
    /** Of these repeated Message-IDs, how many had their reply unrecorded at a kill (within the bound) and how many not. */
    split(duplicated) {
        const inFlight = duplicated.filter((id) => this.inFlight.has(id)).length;
        return { inFlight, beyond: duplicated.length - inFlight };
    }
}
//# sourceMappingURL=soak_duplicates.js.map