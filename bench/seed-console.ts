// `npm run seed:console -- --database-url postgres://...`: fills a fresh PostgreSQL database (or schema,
// through the URL's search_path) with a busy organization's runs, audit records, usage records, keys and
// stored responses (bench/console-seed.ts), and writes the configuration a gateway serving it needs.
//
//   --database-url URL     the database (default: DATABASE_URL); it must hold no runs yet
//   --runs N --audit N --keys N --responses N --users N --agents N --days N
//                          the scale (default: 100,000 runs, 1,000,000 audit records, 300 keys, 20,000
//                          responses, 48 users besides the admin and the member, 20 agents, 90 days)
//   --write-config FILE    also write a gateway configuration for the database (YAML): `agent-gateway
//                          serve --config FILE` then serves it, with the admin and member keys printed
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { FULL_SCALE, SEED_ADMIN_KEY, SEED_MEMBER_KEY, seedConfigDocument, seedConsole, type SeedScale } from './console-seed';

const LIMITS: Record<keyof SeedScale, [number, number]> = {
  runs: [1, 10_000_000],
  audit: [1, 100_000_000],
  keys: [1, 100_000],
  users: [1, 10_000],
  agents: [1, 1_000],
  responses: [1, 10_000_000],
  days: [1, 3650],
};

function option(name: string): string | null {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return null;
  const value = process.argv[at + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`--${name} needs a value`);
  return value;
}

function scaleFromArgs(): SeedScale {
  const scale = { ...FULL_SCALE };
  for (const [name, [min, max]] of Object.entries(LIMITS) as [keyof SeedScale, [number, number]][]) {
    const raw = option(name);
    if (raw === null) continue;
    const value = Number(raw.replace(/_/g, ''));
    if (!Number.isInteger(value) || value < min || value > max) throw new Error(`--${name} must be an integer from ${min} to ${max}`);
    scale[name] = value;
  }
  return scale;
}

async function main(): Promise<void> {
  const url = option('database-url') ?? process.env['DATABASE_URL'];
  if (!url) throw new Error('--database-url (or DATABASE_URL) is required');
  const scale = scaleFromArgs();
  console.log(`seeding ${scale.runs} runs, ${scale.audit} audit records, ${scale.keys} keys, ${scale.responses} responses over ${scale.days} days`);
  const result = await seedConsole(url, scale, { log: (line) => console.log(line) });
  console.log(`seeded in ${result.seconds.toFixed(1)} s: ${JSON.stringify(result.counts)}`);
  const file = option('write-config');
  if (file) {
    const doc = {
      server: { host: '127.0.0.1', port: 8080 },
      store: { driver: 'postgres', url, retentionDays: 0 },
      queue: { driver: 'inline' },
      ...seedConfigDocument(scale),
    };
    writeFileSync(file, stringify(doc));
    console.log(`configuration written to ${file}; admin key ${SEED_ADMIN_KEY}, member key ${SEED_MEMBER_KEY}`);
  }
}

main().catch((err: unknown) => {
  console.error(`seed:console: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
