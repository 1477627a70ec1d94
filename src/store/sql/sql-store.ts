// The Store port over SQL: one implementation for the embedded (PGlite) and postgres backends.
import type { Logger } from 'winston';
import type { PrunedConversation, Store } from '../port';
import { sqlAgents } from './agents-repository';
import { sqlAudit } from './audit-repository';
import { sqlConsoleSessions } from './console-sessions-repository';
import { sqlConversations } from './conversations-repository';
import { sqlFiles } from './files-repository';
import type { SqlDatabase } from './database';
import { startEmbeddedMaintenance } from './embedded-maintenance';
import { sqlDashboards } from './dashboards-repository';
import { sqlGroups } from './groups-repository';
import { sqlKeys } from './keys-repository';
import { sqlKnowledge } from './knowledge-repository';
import { sqlOrganizations } from './organizations-repository';
import { sqlResponses } from './responses-repository';
import { sqlRuns } from './runs-repository';
import { sqlTurns } from './turns-repository';
import { migrateSql } from './schema';
import { sqlSettings } from './settings-repository';
import { sqlSteps } from './steps-repository';
import { sqlToolState } from './tool-state-repository';
import { PRUNE_DAY_TOTALS, sqlUsage } from './usage-repository';
import { sqlUsers } from './users-repository';

export interface SqlStoreOptions {
  /** Keep stored files' bytes in files under this directory instead of the database (the embedded store). */
  filesDir?: string;
  logger?: Logger;
  /** How often the embedded database's tables are checked for VACUUM and ANALYZE (embedded-maintenance.ts). */
  maintenanceIntervalMs?: number;
}

export function createSqlStore(db: SqlDatabase, options: SqlStoreOptions = {}): Store {
  let closed: Promise<void> | null = null;
  // A server runs autovacuum; the embedded database has no background workers: the store does it.
  const maintenance =
    db.kind === 'embedded'
      ? startEmbeddedMaintenance(db, {
          ...(options.maintenanceIntervalMs !== undefined ? { intervalMs: options.maintenanceIntervalMs } : {}),
          ...(options.logger ? { logger: options.logger } : {}),
        })
      : null;
  return {
    driver: db.kind,
    organizations: sqlOrganizations(db),
    users: sqlUsers(db),
    groups: sqlGroups(db),
    keys: sqlKeys(db),
    consoleSessions: sqlConsoleSessions(db),
    agents: sqlAgents(db),
    runs: sqlRuns(db),
    steps: sqlSteps(db),
    conversations: sqlConversations(db),
    responses: sqlResponses(db),
    turns: sqlTurns(db),
    audit: sqlAudit(db),
    usage: sqlUsage(db),
    settings: sqlSettings(db),
    toolState: sqlToolState(db),
    files: sqlFiles(db, options.filesDir ?? null),
    knowledge: sqlKnowledge(db),
    dashboards: sqlDashboards(db),
    async migrate() {
      await migrateSql(db);
    },
    async ping() {
      await db.query('SELECT 1');
    },
    async prune(before) {
      return db.transaction(async (tx) => {
        // Finished runs only: an in-progress run belongs to a worker. A run's conversation goes with it.
        const runs = await tx.query<{ org_id: string | null; conversation_id: string | null }>(
          `WITH gone AS (DELETE FROM runs WHERE created_at < $1::timestamptz AND status <> 'in_progress' RETURNING id, conversation_id),
             verdicts AS (DELETE FROM step_verdicts WHERE run_id IN (SELECT id FROM gone)),
             conversations_gone AS (
               DELETE FROM conversations WHERE id IN (SELECT conversation_id FROM gone) AND run_id IN (SELECT id FROM gone) RETURNING id, org_id
             ),
             items AS (DELETE FROM conversation_items WHERE conversation_id IN (SELECT id FROM conversations_gone))
           SELECT c.org_id, c.id AS conversation_id FROM gone g LEFT JOIN conversations_gone c ON c.id = g.conversation_id`,
          [before],
        );
        // The BRIN indexes' newest block ranges are summarized by autovacuum on a server and never in the
        // embedded database (no background workers): unsummarized ranges are read whole.
        await tx.query(
          `SELECT brin_summarize_new_values('audit_records_at'), brin_summarize_new_values('usage_records_at'), brin_summarize_new_values('runs_created')`,
        );
        await tx.query('DELETE FROM audit_records WHERE at < $1::timestamptz', [before]);
        await tx.query('DELETE FROM usage_records WHERE at < $1::timestamptz', [before]);
        for (const statement of PRUNE_DAY_TOTALS) await tx.query(statement, [before]);
        // Responses conversations past retention: nothing added since the cutoff, no turn in progress.
        const idle = await tx.query<{ org_id: string; id: string }>(
          `WITH gone AS (
             DELETE FROM conversations c
             WHERE c.run_id IS NULL AND c.turn_response_id IS NULL AND c.created_at < $1::timestamptz
               AND NOT EXISTS (SELECT 1 FROM conversation_items i WHERE i.conversation_id = c.id AND i.created_at >= $1::timestamptz)
             RETURNING c.id, c.org_id
           ),
           items AS (DELETE FROM conversation_items WHERE conversation_id IN (SELECT id FROM gone))
           SELECT org_id, id FROM gone`,
          [before],
        );
        const conversations: PrunedConversation[] = [
          ...runs.flatMap((r) => (r.conversation_id !== null && r.org_id !== null ? [{ orgId: r.org_id, id: r.conversation_id }] : [])),
          ...idle.map((c) => ({ orgId: c.org_id, id: c.id })),
        ];
        // The tool state of the conversations that went goes with them, however recently written; other
        // tool state outlives nothing it belongs to: a live conversation keeps it however old it is.
        if (conversations.length > 0) {
          await tx.query('DELETE FROM tool_state WHERE conversation_id = ANY($1::text[])', [conversations.map((c) => c.id)]);
        }
        await tx.query(
          `DELETE FROM tool_state t WHERE t.updated_at < $1::timestamptz AND NOT EXISTS (SELECT 1 FROM conversations c WHERE c.id = t.conversation_id)`,
          [before],
        );
        return { runs: runs.length, conversations: idle.length, gone: conversations };
      });
    },
    close() {
      closed ??= (maintenance?.stop() ?? Promise.resolve()).then(() => db.close());
      return closed;
    },
  };
}
