// The base test configuration and helpers to vary it (no app import, so config-only tests stay light).
import { stringify } from 'yaml';
import { parseConfig } from '../../src/config/load';
import type { GatewayConfig } from '../../src/config/types';

/** Keys of the base configuration's users (organization acme, plus organization other). */
export const TEST_KEYS = {
  admin: 'agw_test_admin_0123456789abcdefghijklmnop',
  member: 'agw_test_member_0123456789abcdefghijklmno',
  viewer: 'agw_test_viewer_0123456789abcdefghijklmno',
  outsider: 'agw_test_outsider_0123456789abcdefghijklm',
} as const;

/** A configuration document (before interpolation and defaults), as a YAML file would hold it. */
export type ConfigDocument = Record<string, unknown>;

export function baseConfigDocument(): ConfigDocument {
  return {
    server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 2000 },
    store: { driver: 'embedded', path: './data' },
    queue: { driver: 'inline', concurrency: 4 },
    providers: { demo: { type: 'demo' } },
    models: [{ id: 'demo', provider: 'demo', created: 1700000000 }],
    organizations: [
      {
        id: 'acme',
        name: 'Acme',
        models: ['*'],
        groups: [{ id: 'finance', members: ['u-viewer'] }],
        users: [
          { id: 'u-admin', name: 'Admin', role: 'admin', keys: [TEST_KEYS.admin] },
          { id: 'u-member', name: 'Member', role: 'member', keys: [TEST_KEYS.member] },
          { id: 'u-viewer', name: 'Viewer', role: 'member', keys: [TEST_KEYS.viewer] },
        ],
      },
      {
        id: 'other',
        name: 'Other Inc.',
        models: ['demo'],
        users: [{ id: 'u-outsider', name: 'Outsider', role: 'admin', keys: [TEST_KEYS.outsider] }],
      },
    ],
    agents: [],
    // Every plugin is on unless switched off; tests switch on the ones they exercise.
    plugins: {
      auth: { enabled: false },
      rateLimit: { enabled: false },
      budgets: { enabled: false },
      dlp: { enabled: false },
      stripFields: { enabled: false },
      audit: { enabled: false },
    },
    logging: { level: 'error', accessLog: false },
  };
}

/** The base organizations with DLP `policy` on `acme` (an organization without a `dlp` block has no policy). */
export function organizationsWithDlp(policy: Record<string, unknown> = { enabled: true }): Record<string, unknown>[] {
  const organizations = baseConfigDocument()['organizations'] as Record<string, unknown>[];
  return organizations.map((org) => (org['id'] === 'acme' ? { ...org, dlp: policy } : org));
}

/** Deep-merges plain objects; arrays and scalars in `patch` replace. */
export function mergeConfig(base: ConfigDocument, patch: ConfigDocument): ConfigDocument {
  const out: ConfigDocument = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    const current = out[key];
    const bothObjects =
      value !== null && typeof value === 'object' && !Array.isArray(value) && current !== null && typeof current === 'object' && !Array.isArray(current);
    out[key] = bothObjects ? mergeConfig(current as ConfigDocument, value as ConfigDocument) : value;
  }
  return out;
}

/** The base document with `patch` merged in, parsed and validated like a config file. */
export function testConfig(patch: ConfigDocument = {}, env: NodeJS.ProcessEnv = {}): GatewayConfig {
  return parseConfig(stringify(mergeConfig(baseConfigDocument(), patch)), env, 'test config');
}
