// Counters and histograms for the request path. prom-client hashes and validates the label values on
// every inc() and observe(), even through a labelled child (~0.3-0.4 µs and a few hundred bytes each,
// five times a request). Here a series is looked up once per distinct label set (labels() is
// memoised) and an update is a number addition. They register in the same prom-client registry and
// are exposed in its text format at scrape time.
import type client from 'prom-client';

/** Most labelled children a metric memoises (label values here come from config: orgs, models, statuses). */
const SERIES_LIMIT = 10_000;

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

abstract class HotMetric<S, L extends string> {
  readonly aggregator = 'sum';
  protected readonly series = new Map<string, { labels: Record<string, string>; state: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    registry: client.Registry,
  ) {
    registry.registerMetric(this as unknown as client.Metric);
  }

  protected abstract fresh(): S;

  /** The series of these label values (in labelNames order), created on first use. */
  protected stateOf(values: readonly string[]): S {
    if (values.length !== this.labelNames.length) throw new Error(`${this.name}: expected ${this.labelNames.length} label values, got ${values.length}`);
    const key = values.length === 1 ? values[0]! : values.join('\u0001');
    let entry = this.series.get(key);
    if (entry === undefined) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]!));
      entry = { labels, state: this.fresh() };
      this.series.set(key, entry);
    }
    return entry.state;
  }

  protected valuesOf(labels: Partial<Record<L, string>>): string[] {
    return this.labelNames.map((name) => String(labels[name] ?? ''));
  }

  reset(): void {
    this.series.clear();
  }
}

export interface HotCounterChild {
  inc(value?: number): void;
}

export class HotCounter<L extends string> extends HotMetric<{ value: number }, L> {
  readonly type = 'counter';
  private readonly children = new Map<string, HotCounterChild>();

  protected fresh(): { value: number } {
    return { value: 0 };
  }

  /** The series of these label values (in labelNames order); keep it: inc() is then one addition. */
  labels(...values: string[]): HotCounterChild {
    const key = values.join('\u0001');
    let child = this.children.get(key);
    if (child === undefined) {
      const state = this.stateOf(values);
      child = {
        inc(value = 1) {
          state.value += value;
        },
      };
      if (this.children.size < SERIES_LIMIT) this.children.set(key, child);
    }
    return child;
  }

  inc(labels: Partial<Record<L, string>>, value = 1): void {
    this.stateOf(this.valuesOf(labels)).value += value;
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: MetricValue[] } {
    const values = [...this.series.values()].map(({ labels, state }) => ({ value: state.value, labels }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  override reset(): void {
    super.reset();
    this.children.clear();
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

export class HotHistogram<L extends string> extends HotMetric<HistogramState, L> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];
  private readonly children = new Map<string, HotHistogramChild>();

  constructor(name: string, help: string, labelNames: readonly L[], buckets: readonly number[], registry: client.Registry) {
    super(name, help, labelNames, registry);
    this.bounds = [...buckets].sort((a, b) => a - b);
  }

  protected fresh(): HistogramState {
    return { counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
  }

  labels(...values: string[]): HotHistogramChild {
    const key = values.join('\u0001');
    let child = this.children.get(key);
    if (child === undefined) {
      const state = this.stateOf(values);
      const bounds = this.bounds;
      child = {
        observe(value) {
          let i = 0;
          while (i < bounds.length && value > bounds[i]!) i++;
          state.counts[i]! += 1;
          state.sum += value;
          state.count += 1;
        },
      };
      if (this.children.size < SERIES_LIMIT) this.children.set(key, child);
    }
    return child;
  }

  observe(labels: Partial<Record<L, string>>, value: number): void {
    this.labels(...this.valuesOf(labels)).observe(value);
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: MetricValue[] } {
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

  override reset(): void {
    super.reset();
    this.children.clear();
  }
}
