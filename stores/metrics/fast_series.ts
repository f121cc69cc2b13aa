import type { Metric, Registry } from 'prom-client'

/**
 * Counters and histograms for the hot paths (a request, a recipient outcome, an SMTP or webhook attempt).
 * prom-client's own `inc()` and `observe()` build a key from the labels and validate them on every call; these
 * children are made once for a fixed label set, so counting is one addition (a histogram: a bucket search and
 * three additions), and labels are formatted only when Prometheus scrapes. They register with a prom-client
 * registry as custom metrics (an object with `name` and `get()`), so the exposition is prom-client's.
 */

export class CounterChild {
  value = 0
  inc (by = 1): void { this.value += by }
}

export class HistogramChild {
  readonly counts: Float64Array
  sum = 0
  count = 0
  constructor (private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1)
  }

  observe (v: number): void {
    let i = 0
    while (i < this.bounds.length && v > this.bounds[i]!) i++
    this.counts[i]!++
    this.sum += v
    this.count++
  }
}

type Labels = Record<string, string>
interface Sample { metricName?: string, labels: Labels, value: number }

abstract class Family<C> {
  protected readonly children: Array<{ labels: Labels, child: C }> = []

  constructor (readonly name: string, readonly help: string, registry: Registry) {
    registry.registerMetric(this as unknown as Metric)
  }

  /** The child of one label set; call once per label set and keep it (each call adds a series). */
  child (labels: Labels = {}): C {
    const child = this.make()
    this.children.push({ labels, child })
    return child
  }

  protected abstract make (): C
  protected abstract samples (labels: Labels, child: C): Sample[]
  protected abstract readonly type: 'counter' | 'histogram'

  get (): { name: string, help: string, type: string, aggregator: 'sum', values: Sample[] } {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: 'sum',
      values: this.children.flatMap(({ labels, child }) => this.samples(labels, child))
    }
  }
}

export class CounterFamily extends Family<CounterChild> {
  protected readonly type = 'counter'
  protected make (): CounterChild { return new CounterChild() }
  protected samples (labels: Labels, child: CounterChild): Sample[] { return [{ labels, value: child.value }] }
}

export class HistogramFamily extends Family<HistogramChild> {
  protected readonly type = 'histogram'

  constructor (name: string, help: string, registry: Registry, private readonly bounds: readonly number[]) {
    super(name, help, registry)
  }

  protected make (): HistogramChild { return new HistogramChild(this.bounds) }

  protected samples (labels: Labels, h: HistogramChild): Sample[] {
    const out: Sample[] = []
    let cumulative = 0
    for (let i = 0; i <= this.bounds.length; i++) {
      cumulative += h.counts[i]!
      const le = i < this.bounds.length ? String(this.bounds[i]) : '+Inf'
      out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: cumulative })
    }
    out.push({ metricName: `${this.name}_sum`, labels, value: h.sum }, { metricName: `${this.name}_count`, labels, value: h.count })
    return out
  }
}
