import type { ConsoleSessionRepository } from '../port';
import type { ConsoleSessionRecord } from '../types';
import type { SqlExecutor } from './database';
import { iso, isoOrNull, type Timestamp } from './rows';
import { PRINCIPAL_COLUMNS, toPrincipal, type PrincipalRow } from './users-repository';

interface SessionRow {
  id: string;
  org_id: string;
  user_id: string;
  token_hash: string | null;
  ticket_hash: string | null;
  ticket_expires_at: Timestamp;
  subject: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
}

function toSession(row: SessionRow): ConsoleSessionRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    userId: row.user_id,
    tokenHash: row.token_hash,
    ticketHash: row.ticket_hash,
    ticketExpiresAt: iso(row.ticket_expires_at),
    subject: row.subject,
    createdAt: iso(row.created_at),
    expiresAt: iso(row.expires_at),
    revokedAt: isoOrNull(row.revoked_at),
  };
}

const COLUMNS = 's.id, s.org_id, s.user_id, s.token_hash, s.ticket_hash, s.ticket_expires_at, s.subject, s.created_at, s.expires_at, s.revoked_at';

export function sqlConsoleSessions(db: SqlExecutor): ConsoleSessionRepository {
  return {
    async create(session) {
      await db.query(
        `INSERT INTO console_sessions (id, org_id, user_id, token_hash, ticket_hash, ticket_expires_at, subject, created_at, expires_at, revoked_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          session.id,
          session.orgId,
          session.userId,
          session.tokenHash,
          session.ticketHash,
          session.ticketExpiresAt,
          session.subject,
          session.createdAt,
          session.expiresAt,
          session.revokedAt,
        ],
      );
    },
    async redeemTicket(ticketHash, tokenHash, now) {
      // One conditional UPDATE: of two concurrent redemptions, the second finds ticket_hash cleared.
      const [row] = await db.query<SessionRow>(
        `UPDATE console_sessions s SET token_hash = $2, ticket_hash = NULL
         WHERE s.ticket_hash = $1 AND s.ticket_expires_at > $3::timestamptz AND s.expires_at > $3::timestamptz AND s.revoked_at IS NULL
         RETURNING ${COLUMNS}`,
        [ticketHash, tokenHash, now],
      );
      return row ? toSession(row) : null;
    },
    async resolve(tokenHash, now) {
      // One round trip on the auth path: the session, its user (still of the session's organization) and the user's groups.
      const [row] = await db.query<SessionRow & PrincipalRow>(
        `SELECT ${COLUMNS}, ${PRINCIPAL_COLUMNS}
         FROM console_sessions s JOIN users u ON u.id = s.user_id AND u.org_id = s.org_id
         WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2::timestamptz`,
        [tokenHash, now],
      );
      return row ? { session: toSession(row), ...toPrincipal(row) } : null;
    },
    async get(id) {
      const [row] = await db.query<SessionRow>(`SELECT ${COLUMNS} FROM console_sessions s WHERE s.id = $1`, [id]);
      return row ? toSession(row) : null;
    },
    async revoke(id, at) {
      const rows = await db.query('UPDATE console_sessions SET revoked_at = $2, ticket_hash = NULL WHERE id = $1 AND revoked_at IS NULL RETURNING id', [
        id,
        at,
      ]);
      return rows.length === 1;
    },
    async revokedSince(since) {
      const rows = await db.query<{ id: string }>('SELECT id FROM console_sessions WHERE revoked_at >= $1 ORDER BY revoked_at, id', [since]);
      return rows.map((r) => r.id);
    },
    async prune(before, limit) {
      const [row] = await db.query<{ n: number }>(
        `WITH gone AS (
           DELETE FROM console_sessions WHERE id IN (
             SELECT id FROM console_sessions WHERE expires_at < $1::timestamptz OR revoked_at < $1::timestamptz LIMIT $2
           ) RETURNING id
         )
         SELECT count(*)::int AS n FROM gone`,
        [before, limit],
      );
      return row?.n ?? 0;
    },
  };
}
