/** A one-line text progress bar on stderr; redrawn in place on a terminal, printed every 10 % otherwise. */
export class ProgressBar {
  private lastDecile = -1
  private readonly tty = process.stderr.isTTY === true

  constructor (private readonly prefix: string, private readonly width = 30) {}

  update (fraction: number, label: string): void {
    const f = Math.min(1, Math.max(0, fraction))
    const filled = Math.round(f * this.width)
    const bar = '#'.repeat(filled) + '.'.repeat(this.width - filled)
    const line = `${this.prefix} [${bar}] ${String(Math.round(f * 100)).padStart(3)}% ${label}`
    if (this.tty) {
      process.stderr.write(`\r${line.slice(0, (process.stderr.columns ?? 120) - 1)}\u001b[K`)
      return
    }
    const decile = Math.floor(f * 10)
    if (decile !== this.lastDecile) {
      this.lastDecile = decile
      process.stderr.write(line + '\n')
    }
  }

  done (label: string): void {
    this.update(1, label)
    if (this.tty) process.stderr.write('\n')
  }
}
