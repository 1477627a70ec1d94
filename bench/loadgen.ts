// The load generator, a process of its own: closed-loop, CONCURRENCY requests in flight for DURATION
// seconds over keep-alive connections (undici), recording latency and time to first body byte.
// Prints one JSON line of results.
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

interface Args {
  url: string;
  concurrency: number;
  durationMs: number;
  warmupMs: number;
  stream: boolean;
  key: string;
  model: string;
}

function parseArgs(): Args {
  const [url, concurrency, durationMs, warmupMs, stream, key, model] = process.argv.slice(2);
  return {
    url: String(url),
    concurrency: Number(concurrency),
    durationMs: Number(durationMs),
    warmupMs: Number(warmupMs),
    stream: stream === 'stream',
    key: key ?? '',
    model: model || 'bench-model',
  };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function main(): Promise<void> {
  const args = parseArgs();
  const url = new URL(args.url);
  // An https target (the TLS upstream called directly) is verified against the bench's own CA.
  const ca = process.env['BENCH_CA'];
  const pool = new Pool(url.origin, {
    connections: args.concurrency,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    ...(ca ? { connect: { ca: readFileSync(ca) } } : {}),
  });
  const body = JSON.stringify({
    model: args.model,
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Write one sentence about foxes.' },
    ],
    temperature: 0.2,
    metadata: { team: 'bench' },
    ...(args.stream ? { stream: true } : {}),
  });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (args.key) headers['authorization'] = `Bearer ${args.key}`;

  const latencies: number[] = [];
  const ttfbs: number[] = [];
  let errors = 0;
  let measuring = false;
  const start = performance.now();
  const warmEnd = start + args.warmupMs;
  const end = warmEnd + args.durationMs;
  setTimeout(() => (measuring = true), args.warmupMs).unref();

  async function worker(): Promise<void> {
    while (performance.now() < end) {
      const t0 = performance.now();
      const counted = measuring;
      try {
        const res = await pool.request({ path: url.pathname, method: 'POST', headers, body });
        let first = 0;
        for await (const _ of res.body) if (first === 0) first = performance.now();
        const t1 = performance.now();
        if (res.statusCode !== 200) {
          if (counted) errors++;
          continue;
        }
        if (counted && t1 <= end) {
          latencies.push(t1 - t0);
          ttfbs.push((first || t1) - t0);
        }
      } catch {
        if (counted) errors++;
      }
    }
  }
  await Promise.all(Array.from({ length: args.concurrency }, worker));
  await pool.close();
  const lat = Float64Array.from(latencies).sort();
  const tt = Float64Array.from(ttfbs).sort();
  process.stdout.write(
    `${JSON.stringify({
      requests: lat.length,
      errors,
      rps: lat.length / (args.durationMs / 1000),
      p50: percentile(lat, 50),
      p99: percentile(lat, 99),
      ttfbP50: percentile(tt, 50),
      ttfbP99: percentile(tt, 99),
    })}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`loadgen: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
