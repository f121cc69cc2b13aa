import { webhookJobSubject, shardOf } from '../../protocol/mod.js';
import { isJobRef, webhookJobJson, webhookJobMsgId } from './webhook_jobs.js';
/** `serialized[i]`: job i as JSON when the caller already made it; a reference may come without. */
export function webhookBatchJson(jobs, serialized) {
    const rows = jobs.length > 1 ? refRows(jobs) : undefined;
    if (rows !== undefined) {
        const base = Math.min(...rows.map((r) => r[4]));
        for (const r of rows) {
            r[3] -= base;
            r[4] -= base;
        }
        const batch = { webhook_id: jobs[0].webhook_id, org_id: jobs[0].org_id, base, refs: rows };
        return JSON.stringify(batch);
    }
    const all = jobs.map((j, i) => serialized[i] ?? webhookJobJson(j));
    return all.length === 1 ? all[0] : `{"jobs":[${all.join(',')}]}`;
}
/** Every job's row with absolute times, or undefined when one cannot be a row or the jobs are not of one webhook. */
function refRows(jobs) {
    const first = jobs[0];
    const rows = [];
    for (const j of jobs) {
        const r = j.org_id === first.org_id && j.webhook_id === first.webhook_id ? refRow(j) : undefined;
        if (r === undefined)
            return undefined;
        rows.push(r);
    }
    return rows;
}
/** The row of a job that names (or can name) its event; undefined for a test event or a job without a sequence. */
function refRow(j) {
    if (j.test === true || j.replay === true || j.run !== undefined || typeof j.created_at !== 'number' || typeof j.due_at !== 'number' || typeof j.attempt !== 'number')
        return undefined;
    if (isJobRef(j))
        return [j.event_seq, j.event_id, j.attempt, j.due_at, j.created_at];
    if (j.event_seq === undefined)
        return undefined;
    return [j.event_seq, j.event.id, j.attempt, j.due_at, j.created_at];
}
const enc = new TextEncoder();
/**
 * The message id of a job-stream message holding these jobs (`ids`: each job's own, see webhookJobMsgId): a repeated
 * write of the same jobs is stored once (an event fanned out again after its engine stopped parks the same batch),
 * while any write that differs in one job is stored. A batch's id names its first job and count for reading, and a
 * hash of every job's id, so a batch that repeats an earlier one's first job with other jobs is not dropped.
 */
export function webhookBatchMsgId(ids) {
    if (ids.length === 1)
        return ids[0];
    // FNV-1a over every id: the first id and the count alone would take a different batch for a repeat.
    let h = 0x811c9dc5;
    for (const id of ids) {
        for (let i = 0; i < id.length; i++)
            h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
        h = Math.imul(h ^ 0x2c, 0x01000193);
    }
    return `${ids[0]}+${ids.length}#${(h >>> 0).toString(36)}`;
}
/**
 * The id of a job stored again by the engine that holds it (handed back to wait, its old message acknowledged once
 * this write is stored): unique to that write, so it is never taken for a repeat of the job's earlier write.
 */
export function requeuedJobMsgId(job) {
    return `${webhookJobMsgId(job)}@${job.due_at}`;
}
/**
 * Stores jobs of one webhook as one message (a batch when more than one), with the message id webhookBatchMsgId
 * gives; `ids`: each job's id when not webhookJobMsgId (a job stored again, requeuedJobMsgId).
 */
export async function publishWebhookJobBatch(js, shards, jobs, serialized, ids) {
    const first = jobs[0];
    if (first === undefined)
        return;
    const payload = enc.encode(webhookBatchJson(jobs, serialized));
    await js.publish(webhookJobSubject(shardOf(first.webhook_id, shards), first.webhook_id), payload, { msgID: webhookBatchMsgId(ids ?? jobs.map(webhookJobMsgId)) });
}
/** The jobs of a job-stream message: one plain job, a batch, or a batch of references. Throws on anything else. */
export function webhookJobsOf(data) {
    const d = data;
    if (d !== null && typeof d === 'object') {
        if (Array.isArray(d.jobs)) {
            if (d.jobs.length > 0 && d.jobs.every(isJob))
                return d.jobs;
        }
        else if (Array.isArray(d.refs)) {
            const { webhook_id: webhookId, org_id: orgId, base } = d;
            if (d.refs.length > 0 && typeof webhookId === 'string' && typeof orgId === 'string' && typeof base === 'number' && d.refs.every(isRefRow)) {
                return d.refs.map((r) => ({ event_seq: r[0], event_id: r[1], org_id: orgId, webhook_id: webhookId, attempt: r[2], due_at: base + r[3], created_at: base + r[4] }));
            }
        }
        else if (isJob(d)) {
            return [d];
        }
    }
    throw new Error('not a webhook job');
}
function isRefRow(r) {
    return Array.isArray(r) && r.length === 5 && typeof r[0] === 'number' && typeof r[1] === 'string' &&
        typeof r[2] === 'number' && typeof r[3] === 'number' && typeof r[4] === 'number';
}
function isJob(j) {
    const x = j;
    return x !== null && typeof x === 'object' && typeof x.webhook_id === 'string' && typeof x.org_id === 'string' &&
        typeof x.attempt === 'number' && typeof x.due_at === 'number' &&
        (typeof x.event?.id === 'string' || (x.event === undefined && typeof x.event_seq === 'number' && typeof x.event_id === 'string'));
}
//# sourceMappingURL=webhook_job_batch.js.map