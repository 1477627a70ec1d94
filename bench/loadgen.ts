// The load generator, a process of its own: closed-loop, `concurrency` requests in flight for
// `durationMs` over keep-alive connections (undici), recording latency and time to first body byte.
// Its one argument is a JSON LoadOptions; it prints one JSON line of results.
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

/** The one argument: a JSON object (run.ts builds it). */
export interface LoadOptions {
  url: string;
  concurrency: number;
  durationMs: number;
  warmupMs: number;
  /** The request body, sent as it is with every request. */
  body: string;
  /** An API key for the Authorization header; empty: none. */
  key: string;
  /**
   * A text each reply must contain (a stream's final event, e.g. `event: response.completed`), else the
   * request counts as an error: a stream that failed after its 200 is not a success.
   */
  expectText?: string;
  /** Report the Responses id (`resp_…`) of one measured reply, read from its first chunk. */
  captureResponseId?: boolean;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '{}') as LoadOptions;
  const url = new URL(args.url);
  // An https target (the TLS upstream called directly) is verified against the bench's own CA.
  const ca = process.env['BENCH_CA'];
  const pool = new Pool(url.origin, {
    connections: args.concurrency,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    ...(ca ? { connect: { ca: readFileSync(ca) } } : {}),
  });
  const body = args.body;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (args.key) headers['authorization'] = `Bearer ${args.key}`;

  const latencies: number[] = [];
  const ttfbs: number[] = [];
  let errors = 0;
  let responseId: string | null = null;
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
        let firstChunk: Buffer | null = null;
        const expected = args.expectText ? Buffer.from(args.expectText) : null;
        let found = expected === null;
        // The end of the previous chunk: the expected text may straddle two.
        let tail: Buffer = Buffer.alloc(0);
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          if (first === 0) {
            first = performance.now();
            firstChunk = chunk;
          }
          if (!found && expected) {
            const joined = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
            found = joined.includes(expected);
            tail = joined.subarray(Math.max(0, joined.length - expected.length + 1));
          }
        }
        const t1 = performance.now();
        if (res.statusCode !== 200 || !found) {
          if (counted) errors++;
          continue;
        }
        if (args.captureResponseId && counted && responseId === null && firstChunk) {
          responseId = /"id":"(resp_[^"]+)"/.exec(firstChunk.toString('utf8'))?.[1] ?? null;
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
      ...(args.captureResponseId ? { responseId } : {}),
    })}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`loadgen: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
