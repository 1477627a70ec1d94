import type { SettingsRepository } from '../port';
import type { SqlExecutor } from './database';

export function sqlSettings(db: SqlExecutor): SettingsRepository {
  return {
    async get(key) {
      const [row] = await db.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]);
      return row?.value ?? null;
    },
    async setIfAbsent(key, value) {
      // The unique key makes the insert first-writer-wins; everyone then reads the winner's value.
      await db.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, value]);
      const [row] = await db.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]);
      if (!row) throw new Error(`setting ${key} vanished after insert`);
      return row.value;
    },
  };
}
