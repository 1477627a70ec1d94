// Counters and histograms for the request path. prom-client hashes and validates the label values on
// every inc() and observe(), even through a labelled child (~0.3-0.4 µs and a few hundred bytes each,
// five times a request). Here a series is looked up once per distinct label set (labels() is
// memoised) and an update is a number addition. They register in the same prom-client registry and
// are exposed in its text format at scrape time.
import type client from 'prom-client';

/** Most labelled children a metric memoises (label values here come from config: orgs, models, statuses). */
const CHILD_LIMIT = 10_000;

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

interface MetricSnapshot {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: MetricValue[];
}

/**
 * One metric: its series (state S per label set) and the memoised children (C) that update them. A
 * subclass says what a series holds, how a child updates it and how the registry reads it.
 */
abstract class HotMetric<S, C, L extends string> {
  readonly aggregator = 'sum';
  protected readonly series = new Map<string, { labels: Record<string, string>; state: S }>();
  private readonly children = new Map<string, C>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    registry: client.Registry,
  ) {
    registry.registerMetric(this as unknown as client.Metric);
  }

  protected abstract fresh(): S;
  protected abstract childOf(state: S): C;
  abstract get(): MetricSnapshot;

  /** The child of these label values (in labelNames order); keep it: an update is then plain arithmetic. */
  labels(...values: string[]): C {
    const key = values.join('\u0001');
    let child = this.children.get(key);
    if (child === undefined) {
      child = this.childOf(this.stateOf(key, values));
      if (this.children.size < CHILD_LIMIT) this.children.set(key, child);
    }
    return child;
  }

  /** The series of these label values, created on first use. */
  private stateOf(key: string, values: readonly string[]): S {
    if (values.length !== this.labelNames.length) throw new Error(`${this.name}: expected ${this.labelNames.length} label values, got ${values.length}`);
    let entry = this.series.get(key);
    if (entry === undefined) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]!));
      entry = { labels, state: this.fresh() };
      this.series.set(key, entry);
    }
    return entry.state;
  }

  /** The child of a label object (cold paths). */
  protected childFor(labels: Partial<Record<L, string>>): C {
    return this.labels(...this.labelNames.map((name) => String(labels[name] ?? '')));
  }

  reset(): void {
    this.series.clear();
    this.children.clear();
  }
}

export interface HotCounterChild {
  inc(value?: number): void;
}

export class HotCounter<L extends string> extends HotMetric<{ value: number }, HotCounterChild, L> {
  readonly type = 'counter';

  protected fresh(): { value: number } {
    return { value: 0 };
  }

  protected childOf(state: { value: number }): HotCounterChild {
    return {
      inc(value = 1) {
        state.value += value;
      },
    };
  }

  inc(labels: Partial<Record<L, string>>, value = 1): void {
    this.childFor(labels).inc(value);
  }

  get(): MetricSnapshot {
    const values = [...this.series.values()].map(({ labels, state }) => ({ value: state.value, labels }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

export interface HotHistogramChild {
  observe(value: number): void;
}

interface HistogramState {
  /** Observations per bucket (not cumulative; the last slot is +Inf). */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class HotHistogram<L extends string> extends HotMetric<HistogramState, HotHistogramChild, L> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];

  constructor(name: string, help: string, labelNames: readonly L[], buckets: readonly number[], registry: client.Registry) {
    super(name, help, labelNames, registry);
    this.bounds = [...buckets].sort((a, b) => a - b);
  }

  protected fresh(): HistogramState {
    return { counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
  }

  protected childOf(state: HistogramState): HotHistogramChild {
    const bounds = this.bounds;
    return {
      observe(value) {
        let i = 0;
        while (i < bounds.length && value > bounds[i]!) i++;
        state.counts[i]! += 1;
        state.sum += value;
        state.count += 1;
      },
    };
  }

  observe(labels: Partial<Record<L, string>>, value: number): void {
    this.childFor(labels).observe(value);
  }

  get(): MetricSnapshot {
    const values: MetricValue[] = [];
    for (const { labels, state } of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += state.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le: bound, ...labels }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...labels }, value: state.count });
      values.push({ metricName: `${this.name}_sum`, labels, value: state.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: state.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
