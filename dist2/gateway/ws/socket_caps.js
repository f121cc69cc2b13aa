/**
 * Open sockets per holder (an API key id, a client address), against one cap. In memory, per process: a socket
 * lives in one process, so its count needs no coordination, and a restart closes the sockets it counted.
 */
export class SocketCounter {
    max;
    open = new Map();
    constructor(max) {
        this.max = max;
    }
    /** Whether one more socket of `holder` would pass the cap. */
    full(holder) {
        return (this.open.get(holder) ?? 0) >= this.max;
    }
    /** Counts one more socket of `holder`; returns how many it now has open. */
    add(holder) {
        const n = (this.open.get(holder) ?? 0) + 1;
        this.open.set(holder, n);
        return n;
    }
    remove(holder) {
        const n = (this.open.get(holder) ?? 0) - 1;
        if (n > 0)
            this.open.set(holder, n);
        else
            this.open.delete(holder);
    }
}
//# sourceMappingURL=socket_caps.js.map