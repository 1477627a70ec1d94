// Opens a real store per backend for a test, isolated from every other test: embedded in a fresh temp
// directory, postgres in a fresh schema of DATABASE_URL, mongodb in a fresh database of MONGODB_URL.
// cleanup() closes the store and removes what was created.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { StoreConfig } from '../../src/config/types';
import { createLogger } from '../../src/log/logger';
import { createStore } from '../../src/store/index';
import type { Store } from '../../src/store/port';

export type TestStoreDriver = 'embedded' | 'postgres' | 'mongodb';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

export function databaseUrl(): string {
  return process.env['DATABASE_URL'] || DEFAULT_DATABASE_URL;
}

export function mongodbUrl(): string | null {
  return process.env['MONGODB_URL'] || null;
}

export interface TestStore {
  store: Store;
  /** The config the store was opened with (reopen with `createStore(config, ...)` to test durability). */
  config: StoreConfig;
  cleanup(): Promise<void>;
}

function testLogger(): ReturnType<typeof createLogger> {
  return createLogger({ level: 'error', silent: process.env['TEST_LOGS'] !== '1' });
}

/** A postgres URL whose connections use `schema` as their search_path (the store's tables go there). */
export function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return parsed.toString();
}

/** Creates a fresh schema in DATABASE_URL; returns its name, a URL using it, and a drop function. */
export async function createTestSchema(prefix = 'test'): Promise<{ schema: string; url: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  return {
    schema,
    url: withSearchPath(databaseUrl(), schema),
    async drop() {
      const client = new pg.Client({ connectionString: databaseUrl() });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * A fresh PostgreSQL schema with the store's tables (migrated, then the store closed) and a client
 * connected to it, for tests that query or EXPLAIN the tables themselves; drop() ends the client too.
 */
export async function migratedTestSchema(prefix: string): Promise<{ schema: string; url: string; client: pg.Client; drop(): Promise<void> }> {
  const created = await createTestSchema(prefix);
  const store = await createStore({ driver: 'postgres', path: '', url: created.url, retentionDays: 30, queryTimeoutMs: 15_000 }, { logger: testLogger() });
  await store.close();
  const client = new pg.Client({ connectionString: created.url });
  await client.connect();
  return {
    ...created,
    client,
    async drop() {
      await client.end();
      await created.drop();
    },
  };
}

export async function openTestStore(driver: TestStoreDriver, options: { retentionDays?: number } = {}): Promise<TestStore> {
  const logger = testLogger();
  const retentionDays = options.retentionDays ?? 30;
  switch (driver) {
    case 'embedded': {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'agw-store-'));
      const config: StoreConfig = { driver: 'embedded', path: dir, retentionDays, queryTimeoutMs: 15_000 };
      try {
        await cp(await embeddedTemplate(), dir, { recursive: true });
        const store = await createStore(config, { logger });
        return {
          store,
          config,
          cleanup: once(async () => {
            await store.close();
            await rm(dir, { recursive: true, force: true });
          }),
        };
      } catch (err) {
        await rm(dir, { recursive: true, force: true });
        throw err;
      }
    }
    case 'postgres': {
      const schema = await createTestSchema('store');
      const config: StoreConfig = { driver: 'postgres', path: '', url: schema.url, retentionDays, queryTimeoutMs: 15_000 };
      try {
        const store = await createStore(config, { logger });
        return {
          store,
          config,
          cleanup: once(async () => {
            await store.close();
            await schema.drop();
          }),
        };
      } catch (err) {
        await schema.drop();
        throw err;
      }
    }
    case 'mongodb': {
      const base = mongodbUrl();
      if (!base) throw new Error('MONGODB_URL is not set');
      const database = `agw_test_${randomBytes(6).toString('hex')}`;
      const parsed = new URL(base);
      parsed.pathname = `/${database}`;
      const config: StoreConfig = { driver: 'mongodb', path: '', url: parsed.toString(), retentionDays, queryTimeoutMs: 15_000 };
      const store = await createStore(config, { logger });
      return {
        store,
        config,
        cleanup: once(async () => {
          await dropMongoDatabase(parsed.toString());
          await store.close();
        }),
      };
    }
  }
}

let template: Promise<string> | null = null;

/**
 * A migrated, empty embedded store created once per test process: PGlite's initdb takes seconds, copying
 * its directory about one, so every embedded test store after the first is a copy of this one.
 */
function embeddedTemplate(): Promise<string> {
  template ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'agw-store-template-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const store = await createStore({ driver: 'embedded', path: dir, retentionDays: 30, queryTimeoutMs: 15_000 }, { logger: testLogger() });
    await store.close();
    return dir;
  })();
  return template;
}

async function dropMongoDatabase(url: string): Promise<void> {
  const { MongoClient } = await import('mongodb');
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
  try {
    await client.connect();
    await client.db().dropDatabase();
  } finally {
    await client.close();
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | null = null;
  return () => (done ??= fn());
}
