import { addressDomain } from '../../protocol/mod.js';
import { DestinationBackoff, backoffSettings } from '../destination_backoff.js';
import { sandboxOutcome } from '../sandbox.js';
import { signingDomain } from '../signing_keys.js';
import { unadmittedResult } from './delivery_plan.js';
import { verdictOf } from './outcomes.js';
/**
 * The attempts of due recipients: live ones through the destinations' backoff and the shard's thread (SMTP), test
 * ones simulated. Only the outcomes come back; what they mean is outcomes.ts's to say.
 */
export class DeliveryAttempts {
    d;
    /** One per process, shared by all its shards: a destination's mail is spread over every shard. */
    backoff;
    signingKey;
    constructor(d) {
        this.d = d;
        this.backoff = new DestinationBackoff(backoffSettings(d.retryScheduleS, d.poolConnections));
        d.metrics.read('outbox_destinations_suspended', (set) => { set(this.backoff.suspendedCount()); });
    }
    /** Sandbox (test) recipients: nothing is sent, the address decides (sandbox.ts); `html` gives the simulated click. */
    sandbox(due, html) {
        const followUps = new Map();
        const results = due.map((rcpt) => {
            const at = new Date().toISOString();
            const r = sandboxOutcome(rcpt, html, this.d.publicUrl, at);
            followUps.set(rcpt, r.followUp);
            return { rcpt, at, outcome: r.outcome };
        });
        return { results, followUps };
    }
    /**
     * Live recipients: those their destination's backoff admits are sent in one task to the shard's thread; the
     * others get their wait or deferral without an attempt. Every admitted attempt is reported back to the backoff,
     * an `unknown` verdict when the thread failed.
     */
    async smtp(a) {
        const { attempt, notAttempted } = await this.admit(a.due, a.overdue, a.tried);
        if (attempt.length === 0)
            return notAttempted;
        const task = {
            kind: 'deliver',
            message: a.message,
            recipients: attempt,
            domain: signingDomain(a.domain),
            verpKey: this.verpKey()
        };
        let sent;
        try {
            const attempted = await this.d.actors.deliver(a.shard, task);
            sent = attempted.results;
            for (const u of attempted.unrecorded ?? []) {
                this.d.log.warn({ message_id: a.message.id, recipient: u.rcpt, code: u.code }, 'SMTP reply not recorded when it arrived; a crash before the delivery state is saved would send again');
            }
        }
        catch (err) {
            for (const r of attempt)
                this.backoff.record(addressDomain(r), 'unknown');
            throw err;
        }
        for (const r of sent) {
            const dest = addressDomain(r.rcpt);
            const response = r.outcome.kind === 'deferred' ? r.outcome.response : '';
            if (this.backoff.record(dest, verdictOf(r.outcome), response)) {
                this.d.metrics.destinationSuspensions.inc();
                this.d.log.warn({ destination: dest, response }, 'destination answers only 4xx; attempts suspended');
            }
        }
        return [...notAttempted, ...sent];
    }
    /**
     * Splits due recipients by their destination's backoff. A recipient at a suspended destination waits for the
     * destination's next probe like a throttled one: no event, no attempt used up, since no answer can change before
     * then. Once the message's span has passed (`overdue`), one that was really attempted before gives up at such a
     * turn, with the destination's last reply, and one never attempted gets its one real attempt despite the
     * suspension (within the destination's cap), so that no recipient waits for probes for ever and none gives up
     * untried. One at a destination still busy with its capped attempts waits too.
     */
    async admit(due, overdue, tried) {
        const attempt = [];
        const notAttempted = [];
        const taken = new Set();
        for (const rcpt of due) {
            const dest = addressDomain(rcpt);
            // a second recipient at one destination must not wait for the slot the first one holds
            const a = await this.backoff.admit(dest, !taken.has(dest), overdue && !tried(rcpt));
            if (a.kind === 'attempt') {
                attempt.push(rcpt);
                taken.add(dest);
            }
            else {
                notAttempted.push(unadmittedResult(rcpt, a, overdue, new Date().toISOString()));
            }
        }
        return { attempt, notAttempted };
    }
    /**
     * The newest return-path key, as plain data for the shard's thread (a copy of its own: a pooled Buffer would take
     * its whole 8 KB pool across the thread boundary).
     */
    verpKey() {
        const k = this.d.cp.verpKeys.signing();
        if (this.signingKey?.id !== k.id)
            this.signingKey = { id: k.id, secret: new Uint8Array(k.secret) };
        return this.signingKey;
    }
}
//# sourceMappingURL=attempts.js.map