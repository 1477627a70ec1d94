// The configuration the bench runs the gateway with (`npm run bench`), as `npm start` would read it:
// the auth, rateLimit, audit and stripFields plugins on, the access log off. The plain upstream is also
// a native Responses upstream (`responses: native`), as OpenAI is: POST /v1/responses is relayed.
import path from 'node:path';

export type StoreKind = 'embedded' | 'postgres';

/** The bench user's key (organization `bench`, role admin). */
export const BENCH_KEY = 'agw_bench_0123456789abcdefghijklmnopqrstuvwxyz';

export interface Upstreams {
  plain: number | null;
  tls: { port: number; caFile: string } | null;
}

/** The configuration document for one store, `dir` holding the embedded store's data. */
export function gatewayConfigDocument(dir: string, upstreams: Upstreams, store: StoreKind, postgresUrl: string | null): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 2000 },
    store:
      store === 'postgres'
        ? { driver: 'postgres', url: postgresUrl, path: path.join(dir, 'data-unused'), retentionDays: 0 }
        : { driver: 'embedded', path: path.join(dir, 'data'), retentionDays: 0 },
    queue: { driver: 'inline' },
    providers: {
      ...(upstreams.plain !== null
        ? {
            bench: {
              type: 'openai',
              baseUrl: `http://127.0.0.1:${upstreams.plain}/v1`,
              apiKey: 'upstream-key',
              responses: 'native',
              retries: { max: 0 },
            },
          }
        : {}),
      // The TLS upstream's certificate is trusted through configuration, as an operator trusts a private CA.
      ...(upstreams.tls !== null
        ? {
            'bench-tls': {
              type: 'openai',
              baseUrl: `https://127.0.0.1:${upstreams.tls.port}/v1`,
              apiKey: 'upstream-key',
              retries: { max: 0 },
              tls: { caFile: upstreams.tls.caFile },
            },
          }
        : {}),
    },
    models: [
      ...(upstreams.plain !== null ? [{ id: 'bench-model', provider: 'bench' }] : []),
      ...(upstreams.tls !== null ? [{ id: 'bench-model-tls', provider: 'bench-tls', upstream: 'bench-model' }] : []),
    ],
    organizations: [
      {
        id: 'bench',
        name: 'Bench',
        models: ['*'],
        // Generous, but on: every request pays for the rate-limit check.
        rateLimit: { requestsPerMinute: 100_000_000, perUserRequestsPerMinute: 100_000_000 },
        users: [{ id: 'bench-user', name: 'Bench', role: 'admin', keys: [BENCH_KEY] }],
      },
    ],
    plugins: {
      auth: { enabled: true },
      rateLimit: { enabled: true },
      audit: { enabled: true },
      stripFields: { enabled: true },
      dlp: { enabled: false },
    },
    // The access log line costs a write per request; the audit plugin records every call regardless.
    logging: { level: 'info', accessLog: false },
  };
}

/**
 * The node flags a package.json script runs the gateway with (`exec node <flags> bin/agent-gateway.js
 * serve`: `npm start`'s, e.g. its young generation size).
 */
export function servingNodeFlags(script: string): string[] {
  const match = /\bnode((?:\s+--\S+)*)\s+bin\/agent-gateway\.js\b/.exec(script);
  if (!match) throw new Error(`the script does not run bin/agent-gateway.js with node: ${script}`);
  return match[1]!.split(/\s+/).filter(Boolean);
}
