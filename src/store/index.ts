// Opens the configured store backend, migrated and reachable, or throws an Error whose message is one
// human-readable line (the CLI prints it as is).
import path from 'node:path';
import type { Logger } from 'winston';
import type { StoreConfig } from '../config/types';
import type { Store } from './port';
import { openPglite, openPostgres, type SqlDatabase } from './sql/database';
import { createSqlStore } from './sql/sql-store';

export interface StoreDeps {
  logger: Logger;
}

/** The URL without credentials, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    return parsed.toString();
  } catch {
    return '(unparseable url)';
  }
}

function reason(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return reason(err.errors[0]);
  const message = err instanceof Error ? err.message || err.name : String(err);
  return message.split('\n')[0] ?? 'unknown error';
}

export async function createStore(config: StoreConfig, deps: StoreDeps): Promise<Store> {
  switch (config.driver) {
    case 'embedded': {
      let db: SqlDatabase | null = null;
      try {
        db = await openPglite(config.path);
        const store = createSqlStore(db, { filesDir: path.join(path.resolve(config.path), 'files'), logger: deps.logger });
        await store.migrate();
        deps.logger.info('store opened', { driver: 'embedded' });
        return store;
      } catch (err) {
        await db?.close().catch(() => undefined);
        throw new Error(`cannot open the embedded store at ${config.path}: ${reason(err)}`);
      }
    }
    case 'postgres': {
      if (!config.url) throw new Error('store.url is required for the postgres store');
      const db = openPostgres({
        url: config.url,
        queryTimeoutMs: config.queryTimeoutMs,
        onConnectionError: (err) => deps.logger.warn('postgres connection error', { driver: 'postgres', errorMessage: err.message }),
      });
      try {
        const store = createSqlStore(db);
        await store.migrate();
        deps.logger.info('store opened', { driver: 'postgres' });
        return store;
      } catch (err) {
        await db.close().catch(() => undefined);
        throw new Error(`cannot open the postgres store at ${redactUrl(config.url)}: ${reason(err)}`);
      }
    }
    case 'mongodb': {
      if (!config.url) throw new Error('store.url is required for the mongodb store');
      let store: Store | null = null;
      try {
        // Loaded here, not at start-up: a gateway on another store never pays for the driver.
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { openMongoStore } = require('./mongo/mongo-store') as typeof import('./mongo/mongo-store');
        store = await openMongoStore({ url: config.url });
        await store.migrate();
        deps.logger.info('store opened', { driver: 'mongodb' });
        return store;
      } catch (err) {
        await store?.close().catch(() => undefined);
        throw new Error(`cannot open the mongodb store at ${redactUrl(config.url)}: ${reason(err)}`);
      }
    }
  }
}
