/** A one-line text progress bar on stderr; redrawn in place on a terminal, printed every 10 % otherwise. */
export class ProgressBar {
    prefix;
    width;
    lastDecile = -1;
    tty = process.stderr.isTTY === true;
    constructor(prefix, width = 30) {
        this.prefix = prefix;
        this.width = width;
    }
    update(fraction, label) {
        const f = Math.min(1, Math.max(0, fraction));
        const filled = Math.round(f * this.width);
        const line = `${this.prefix} [${'#'.repeat(filled)}${'.'.repeat(this.width - filled)}] ${String(Math.round(f * 100)).padStart(3)}% ${label}`;
        if (this.tty) {
            process.stderr.write(`\r${line.slice(0, (process.stderr.columns ?? 120) - 1)}\u001b[K`);
            return;
        }
        const decile = Math.floor(f * 10);
        if (decile !== this.lastDecile) {
            this.lastDecile = decile;
            process.stderr.write(line + '\n');
        }
    }
    done(label) {
        this.update(1, label);
        if (this.tty)
            process.stderr.write('\n');
    }
}
//# sourceMappingURL=progress.js.map