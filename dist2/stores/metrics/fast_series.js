/**
 * Counters and histograms for the hot paths (a request, a recipient outcome, an SMTP or webhook attempt).
 * prom-client's own `inc()` and `observe()` build a key from the labels and validate them on every call; these
 * children are made once for a fixed label set, so counting is one addition (a histogram: a bucket search and
 * three additions), and labels are formatted only when Prometheus scrapes. They register with a prom-client
 * registry as custom metrics (an object with `name` and `get()`), so the exposition is prom-client's.
 */
export class CounterChild {
    value = 0;
    inc(by = 1) { this.value += by; }
}
export class HistogramChild {
    bounds;
    counts;
    sum = 0;
    count = 0;
    constructor(bounds) {
        this.bounds = bounds;
        this.counts = new Float64Array(bounds.length + 1);
    }
    observe(v) {
        let i = 0;
        while (i < this.bounds.length && v > this.bounds[i])
            i++;
        this.counts[i]++;
        this.sum += v;
        this.count++;
    }
}
class Family {
    name;
    help;
    children = [];
    constructor(name, help, registry) {
        this.name = name;
        this.help = help;
        registry.registerMetric(this);
    }
    /** The child of one label set; call once per label set and keep it (each call adds a series). */
    child(labels = {}) {
        const child = this.make();
        this.children.push({ labels, child });
        return child;
    }
    get() {
        return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values: this.children.flatMap(({ labels, child }) => this.samples(labels, child)) };
    }
}
export class CounterFamily extends Family {
    type = 'counter';
    make() { return new CounterChild(); }
    samples(labels, child) { return [{ labels, value: child.value }]; }
}
export class HistogramFamily extends Family {
    bounds;
    type = 'histogram';
    constructor(name, help, registry, bounds) {
        super(name, help, registry);
        this.bounds = bounds;
    }
    make() { return new HistogramChild(this.bounds); }
    samples(labels, h) {
        const out = [];
        let cumulative = 0;
        for (let i = 0; i <= this.bounds.length; i++) {
            cumulative += h.counts[i];
            out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: i < this.bounds.length ? String(this.bounds[i]) : '+Inf' }, value: cumulative });
        }
        out.push({ metricName: `${this.name}_sum`, labels, value: h.sum }, { metricName: `${this.name}_count`, labels, value: h.count });
        return out;
    }
}
//# sourceMappingURL=fast_series.js.map