// The request path's counters and histograms must expose exactly what prom-client's own would.
import assert from 'node:assert/strict';
import client from 'prom-client';
import { HotCounter, HotHistogram } from '../../src/log/hot-metrics';

describe('hot metrics', () => {
  it('a counter exposes the same text as a prom-client counter given the same increments', async () => {
    const theirs = new client.Registry();
    const ours = new client.Registry();
    const reference = new client.Counter({ name: 'x_total', help: 'Things', labelNames: ['org', 'kind'], registers: [theirs] });
    const counter = new HotCounter('x_total', 'Things', ['org', 'kind'], ours);
    for (const [org, kind, n] of [
      ['acme', 'prompt', 12],
      ['acme', 'completion', 5],
      ['acme', 'prompt', 3],
      ['beta "q"', 'prompt', 1],
    ] as const) {
      reference.inc({ org, kind }, n);
      counter.labels(org, kind).inc(n);
    }
    reference.inc({ org: 'acme', kind: 'cold' });
    counter.inc({ org: 'acme', kind: 'cold' });
    assert.equal(await ours.metrics(), await theirs.metrics());
    assert.match(await ours.metrics(), /^x_total\{org="acme",kind="prompt"\} 15$/m);
  });

  it('a histogram exposes the same buckets, sum and count as a prom-client histogram', async () => {
    const theirs = new client.Registry();
    const ours = new client.Registry();
    const buckets = [0.01, 0.05, 0.1, 1];
    const reference = new client.Histogram({ name: 'd_seconds', help: 'Latency', labelNames: ['op'], buckets, registers: [theirs] });
    const histogram = new HotHistogram('d_seconds', 'Latency', ['op'], buckets, ours);
    for (const [op, v] of [
      ['a', 0.004],
      ['a', 0.01], // on a bound: counted in that bucket (le)
      ['a', 0.07],
      ['a', 3],
      ['b', 0.05],
    ] as const) {
      reference.observe({ op }, v);
      histogram.labels(op).observe(v);
    }
    assert.equal(await ours.metrics(), await theirs.metrics());
    assert.match(await ours.metrics(), /^d_seconds_bucket\{le="0.01",op="a"\} 2$/m);
    assert.match(await ours.metrics(), /^d_seconds_count\{op="a"\} 4$/m);
  });

  it('labels() hands back the same child for the same values and refuses a wrong label count', () => {
    const counter = new HotCounter('y_total', 'Y', ['a', 'b'], new client.Registry());
    assert.equal(counter.labels('1', '2'), counter.labels('1', '2'));
    assert.notEqual(counter.labels('1', '2'), counter.labels('1', '3'));
    assert.throws(() => counter.labels('1'), /expected 2 label values/);
  });
});
