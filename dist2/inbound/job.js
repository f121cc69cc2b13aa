const LF = 0x0a;
const dec = new TextDecoder();
/**
 * A job message is its JSON, optionally followed by a line feed and the raw message itself (a message small
 * enough to travel with its job, see `storeInline`). JSON.stringify never writes a bare line feed, so the first
 * one ends the job; jobs without it name a message stored in the bucket.
 */
export function encodeJob(job, raw) {
    const json = Buffer.from(JSON.stringify(job));
    if (raw === undefined)
        return json;
    const out = Buffer.allocUnsafe(json.length + 1 + raw.length);
    json.copy(out, 0);
    out[json.length] = LF;
    out.set(raw, json.length + 1);
    return out;
}
export function decodeJob(data) {
    const end = data.indexOf(LF);
    if (end < 0)
        return { job: JSON.parse(dec.decode(data)) };
    const job = JSON.parse(dec.decode(data.subarray(0, end)));
    return { job, raw: Buffer.from(data.buffer, data.byteOffset + end + 1, data.byteLength - end - 1) };
}
//# sourceMappingURL=job.js.map