// Schema of the SQL stores as an ordered list of migrations. Each runs once, recorded in
// schema_migrations; migrate() applies the missing ones in one transaction under an advisory lock so
// several processes (gateways, workers) may start against the same database at once.
import type { SqlDatabase, SqlExecutor } from './database';
import { BACKFILL_USAGE_DAY_TOTALS } from './usage-repository';

interface Migration {
  version: number;
  name: string;
  statements: string[];
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    statements: [
      `CREATE TABLE organizations (
        id text PRIMARY KEY,
        name text NOT NULL,
        models jsonb NOT NULL,
        rate_limit jsonb,
        dlp jsonb,
        updated_at timestamptz NOT NULL
      )`,
      `CREATE TABLE users (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        name text NOT NULL,
        role text NOT NULL
      )`,
      `CREATE INDEX users_org ON users (org_id, id)`,
      `CREATE TABLE groups (
        org_id text NOT NULL,
        id text NOT NULL,
        name text NOT NULL,
        members jsonb NOT NULL,
        PRIMARY KEY (org_id, id)
      )`,
      `CREATE TABLE api_keys (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        user_id text NOT NULL,
        name text NOT NULL,
        hash text NOT NULL UNIQUE,
        prefix text NOT NULL,
        source text NOT NULL,
        created_at timestamptz NOT NULL,
        last_used_at timestamptz,
        revoked_at timestamptz
      )`,
      `CREATE INDEX api_keys_org ON api_keys (org_id, created_at)`,
      `CREATE INDEX api_keys_revoked ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL`,
      `CREATE TABLE agents (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        version integer NOT NULL,
        created_by text NOT NULL,
        creator_name text NOT NULL,
        definition jsonb NOT NULL,
        definition_hash text NOT NULL,
        shared_with jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        deleted_at timestamptz
      )`,
      `CREATE INDEX agents_org ON agents (org_id, created_at DESC, id DESC)`,
      `CREATE TABLE agent_versions (
        agent_id text NOT NULL,
        version integer NOT NULL,
        definition jsonb NOT NULL,
        definition_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (agent_id, version)
      )`,
      `CREATE TABLE runs (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        agent_id text NOT NULL,
        agent_version integer NOT NULL,
        user_id text NOT NULL,
        conversation_id text NOT NULL,
        inputs jsonb NOT NULL,
        status text NOT NULL,
        result text,
        error text,
        trigger text NOT NULL,
        source_run_id text,
        steps_completed integer NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        ended_at timestamptz,
        deadline_at timestamptz NOT NULL,
        lease_owner text,
        lease_expires_at timestamptz,
        attempts integer NOT NULL,
        revision integer NOT NULL
      )`,
      `CREATE INDEX runs_agent_created ON runs (agent_id, created_at DESC, id DESC)`,
      `CREATE INDEX runs_in_progress ON runs (created_at, id) WHERE status = 'in_progress'`,
      `CREATE INDEX runs_created ON runs (created_at)`,
      `CREATE TABLE step_verdicts (
        run_id text NOT NULL,
        step_number integer NOT NULL,
        name text,
        result text,
        explanation text,
        completed boolean NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (run_id, step_number)
      )`,
      `CREATE TABLE conversations (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        user_id text NOT NULL,
        run_id text,
        metadata jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        next_position integer NOT NULL DEFAULT 1
      )`,
      `CREATE INDEX conversations_run ON conversations (run_id) WHERE run_id IS NOT NULL`,
      `CREATE TABLE conversation_items (
        conversation_id text NOT NULL,
        position integer NOT NULL,
        id text NOT NULL,
        type text NOT NULL,
        role text,
        data jsonb NOT NULL,
        status text NOT NULL,
        idempotency_key text,
        response_id text,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (conversation_id, position)
      )`,
      `CREATE UNIQUE INDEX conversation_items_id ON conversation_items (conversation_id, id)`,
      `CREATE UNIQUE INDEX conversation_items_idempotency ON conversation_items (conversation_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL`,
      `CREATE TABLE responses (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        user_id text NOT NULL,
        status text NOT NULL,
        model text NOT NULL,
        conversation_id text,
        previous_response_id text,
        stored boolean NOT NULL,
        body jsonb NOT NULL,
        input_items jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        expires_at timestamptz
      )`,
      `CREATE INDEX responses_created ON responses (created_at)`,
      `CREATE TABLE response_events (
        response_id text NOT NULL,
        sequence_number integer NOT NULL,
        event text NOT NULL,
        data jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (response_id, sequence_number)
      )`,
      `CREATE TABLE audit_records (
        id text PRIMARY KEY,
        at timestamptz NOT NULL,
        org_id text,
        user_id text,
        key_id text,
        method text NOT NULL,
        route text NOT NULL,
        operation_id text,
        resource_ids jsonb NOT NULL,
        status integer NOT NULL,
        latency_ms double precision NOT NULL,
        request_id text NOT NULL
      )`,
      `CREATE INDEX audit_records_org_at ON audit_records (org_id, at, id) NULLS NOT DISTINCT`,
      `CREATE INDEX audit_records_at ON audit_records (at)`,
      `CREATE TABLE usage_records (
        seq bigserial PRIMARY KEY,
        at timestamptz NOT NULL,
        org_id text NOT NULL,
        user_id text,
        key_id text,
        model text NOT NULL,
        prompt_tokens integer NOT NULL,
        completion_tokens integer NOT NULL,
        request_id text NOT NULL
      )`,
      `CREATE INDEX usage_records_org_at ON usage_records (org_id, at)`,
      `CREATE INDEX usage_records_at ON usage_records (at)`,
      `CREATE TABLE settings (
        key text PRIMARY KEY,
        value text NOT NULL
      )`,
    ],
  },
  {
    // Every API call writes an audit and a usage record: each index on them is paid at the request rate.
    // The `at` indexes serve only the retention delete; rows arrive in time order, so a BRIN index (a
    // few pages, one summary per range of blocks) finds old rows as well as a B-tree did and costs next
    // to nothing per row. usage_records' bigserial key was read by nothing: a sequence step and a B-tree
    // insert per record. Measured on the embedded database: ~20% less work per call's records.
    version: 2,
    name: 'cheaper audit and usage writes',
    statements: [
      `DROP INDEX audit_records_at`,
      `CREATE INDEX audit_records_at ON audit_records USING brin (at) WITH (autosummarize = on)`,
      `DROP INDEX usage_records_at`,
      `CREATE INDEX usage_records_at ON usage_records USING brin (at) WITH (autosummarize = on)`,
      `ALTER TABLE usage_records DROP COLUMN seq`,
    ],
  },
  {
    // audit_records had two B-trees paid per call: the primary key on id (read only by the retried
    // batch's ON CONFLICT) and (org_id, at, id) for listing. One unique index on (org_id, at, id) does
    // both: a retried record has the same three values, and NULLS NOT DISTINCT makes records without an
    // organization conflict too. Measured on the embedded database: ~3 of ~24 µs per call's records.
    version: 3,
    name: 'one index for audit listing and retried batches',
    statements: [
      `CREATE UNIQUE INDEX audit_records_org_at_id ON audit_records (org_id, at, id) NULLS NOT DISTINCT`,
      `DROP INDEX audit_records_org_at`,
      `ALTER TABLE audit_records DROP CONSTRAINT audit_records_pkey`,
    ],
  },
  {
    // A call that made one upstream call (nearly all) keeps its token usage in its audit record instead
    // of a usage_records row: one row and two index entries per call instead of two rows and four.
    // Measured on the embedded database: ~22 -> ~15 µs per call's records. usage_records keeps the
    // usage of calls with several upstream calls (or none recorded in the audit trail).
    version: 4,
    name: "a call's own usage in its audit record",
    statements: [`ALTER TABLE audit_records ADD COLUMN model text, ADD COLUMN prompt_tokens integer, ADD COLUMN completion_tokens integer`],
  },
  {
    // What the DLP policy replaced in the call, per detector (never the matched text); NULL when nothing.
    version: 5,
    name: 'DLP redaction counts in audit records',
    statements: [`ALTER TABLE audit_records ADD COLUMN redactions jsonb`],
  },
  {
    // lease_generation fences a run's writers: every acquireLease increments it and an execution's
    // writes carry the generation it took, checked in the write's own statement. key_id: a run's
    // model calls are metered to the key that triggered it. error_code: the Run's `error` extension.
    version: 6,
    name: 'run lease fencing, triggering key, error code',
    statements: [`ALTER TABLE runs ADD COLUMN lease_generation integer NOT NULL DEFAULT 0, ADD COLUMN key_id text, ADD COLUMN error_code text`],
  },
  {
    // A model call's record says which provider served it and the error code it ended with (also
    // after a stream started, under a 200); a record shortened to its size bound says so.
    version: 7,
    name: 'model call provider, error code and truncation in audit records',
    statements: [`ALTER TABLE audit_records ADD COLUMN provider text, ADD COLUMN error_code text, ADD COLUMN truncated boolean`],
  },
  {
    // A streaming response is leased by the process generating it (renewed while it streams); the
    // sweeper finds lapsed leases through a partial index holding only in-progress rows (few, short
    // lived). Responses expire by their own expires_at (retention computed when created): the prune
    // reads a partial index on it, so the created_at index, read by nothing else, goes.
    version: 8,
    name: 'response leases and expiry index',
    statements: [
      `ALTER TABLE responses ADD COLUMN lease_owner text, ADD COLUMN lease_until timestamptz`,
      `CREATE INDEX responses_lapsed ON responses (lease_until) WHERE status = 'in_progress' AND lease_until IS NOT NULL`,
      `CREATE INDEX responses_expiry ON responses (expires_at) WHERE expires_at IS NOT NULL`,
      `DROP INDEX responses_created`,
    ],
  },
  {
    // Stored Responses conversations: the running summary of compaction and the context size of the
    // last turn (whether the next needs compaction), and the turn held by the response generating in
    // the conversation (one at a time, across processes: see ConversationRepository.claimTurn).
    version: 9,
    name: 'conversation turns and compaction',
    statements: [
      `ALTER TABLE conversations ADD COLUMN summary jsonb, ADD COLUMN context_tokens integer, ADD COLUMN turn_response_id text, ADD COLUMN turn_until timestamptz`,
    ],
  },
  {
    // Hosted tools' per-conversation state (the egress profile svc_vpn_connect chose): seen by every
    // process, kept across restarts. The key leads with conversation_id so a conversation's state is
    // forgotten through the primary key; updated_at serves the retention prune (small table, no index).
    version: 10,
    name: 'hosted tool state per conversation',
    statements: [
      `CREATE TABLE tool_state (
        conversation_id text NOT NULL,
        org_id text NOT NULL,
        key text NOT NULL,
        value text NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (conversation_id, org_id, key)
      )`,
    ],
  },
  {
    // Stored files (POST /v1/files, tool outputs). `content` holds the bytes on PostgreSQL and is NULL
    // on the embedded store, which keeps them in files under <store.path>/files (files-repository.ts
    // says why). Listing reads the organization's newest first (keyset on created_at, id).
    version: 11,
    name: 'stored files',
    statements: [
      `CREATE TABLE files (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        user_id text,
        filename text NOT NULL,
        purpose text NOT NULL,
        bytes bigint NOT NULL,
        media_type text NOT NULL,
        created_at timestamptz NOT NULL,
        content bytea
      )`,
      `CREATE INDEX files_org_created ON files (org_id, created_at, id)`,
    ],
  },
  {
    // Knowledge stores (svc_knowledge_store_search): documents searched with PostgreSQL full text, the
    // same SQL on the embedded database and a server. The tsvector is a stored generated column (title
    // weighted above text, English stemming) under a GIN index: computed once per document, not per
    // search. Dashboards (svc_dashboard_generate/update): the spec and its data, versioned by a counter.
    version: 12,
    name: 'knowledge stores and dashboards',
    statements: [
      `CREATE TABLE knowledge_stores (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        name text NOT NULL,
        description text,
        created_by text,
        created_at timestamptz NOT NULL
      )`,
      `CREATE UNIQUE INDEX knowledge_stores_org_name ON knowledge_stores (org_id, name)`,
      `CREATE TABLE knowledge_documents (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        store_id text NOT NULL REFERENCES knowledge_stores (id) ON DELETE CASCADE,
        title text NOT NULL,
        source text,
        metadata jsonb NOT NULL,
        text text NOT NULL,
        created_at timestamptz NOT NULL,
        search_vector tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', text), 'B')
        ) STORED
      )`,
      `CREATE INDEX knowledge_documents_store ON knowledge_documents (store_id, created_at, id)`,
      `CREATE INDEX knowledge_documents_search ON knowledge_documents USING gin (search_vector)`,
      `CREATE TABLE dashboards (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        title text NOT NULL,
        spec jsonb NOT NULL,
        data jsonb NOT NULL,
        version integer NOT NULL,
        created_by text,
        conversation_id text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`,
      `CREATE INDEX dashboards_org_updated ON dashboards (org_id, updated_at DESC, id)`,
    ],
  },
  {
    // The console's reads (issue 20). Keys gain an expiry, a model allow-list and budgets. The list
    // operations read keyset pages newest first (or, for the audit trail, in either order) through an
    // index whose leading columns are the filter and whose trailing ones are the order, so a page costs
    // its own rows whatever the table holds: runs by organization, status or triggering user (by agent:
    // runs_agent_created), stored responses by organization or user, audit records by user, key,
    // operation, model (model calls only) and status class (errors only: 2xx pages read the
    // organization's index, where nearly every row matches). Every audit index is paid per API call;
    // the model and status ones are partial to keep that small.
    version: 13,
    name: 'console reads: key expiry, allow-list and budgets; list indexes',
    statements: [
      `ALTER TABLE api_keys ADD COLUMN expires_at timestamptz, ADD COLUMN models jsonb, ADD COLUMN budgets jsonb NOT NULL DEFAULT '[]'::jsonb`,
      `CREATE INDEX api_keys_org_user ON api_keys (org_id, user_id, created_at, id)`,
      `CREATE INDEX runs_org_created ON runs (org_id, created_at DESC, id DESC)`,
      `CREATE INDEX runs_org_status_created ON runs (org_id, status, created_at DESC, id DESC)`,
      `CREATE INDEX runs_org_user_created ON runs (org_id, user_id, created_at DESC, id DESC)`,
      `CREATE INDEX responses_org_created ON responses (org_id, created_at DESC, id DESC) WHERE stored`,
      `CREATE INDEX responses_org_user_created ON responses (org_id, user_id, created_at DESC, id DESC) WHERE stored`,
      `CREATE INDEX audit_records_org_user_at ON audit_records (org_id, user_id, at, id)`,
      `CREATE INDEX audit_records_org_key_at ON audit_records (org_id, key_id, at, id)`,
      `CREATE INDEX audit_records_org_operation_at ON audit_records (org_id, operation_id, at, id)`,
      `CREATE INDEX audit_records_org_model_at ON audit_records (org_id, model, at, id) WHERE model IS NOT NULL`,
      `CREATE INDEX audit_records_org_error_at ON audit_records (org_id, (status / 100), at, id) WHERE status >= 400`,
    ],
  },
  {
    // What a model call cost (models[].pricing) and how much of its prompt was read from a prompt cache,
    // beside its token counts: in the audit record carrying a call's own usage and in usage records.
    // NULL where unknown (records written before, models without pricing). GET /v1/usage and the
    // budgets counted by the store read them through the (org_id, at) indexes both tables already have.
    version: 14,
    name: 'cached prompt tokens and cost of usage',
    statements: [
      `ALTER TABLE audit_records ADD COLUMN cached_prompt_tokens integer, ADD COLUMN cost double precision`,
      `ALTER TABLE usage_records ADD COLUMN cached_prompt_tokens integer, ADD COLUMN cost double precision`,
    ],
  },
  {
    // Console sessions (sign-in with OpenID Connect): a one-time ticket, then a bearer token, both kept
    // as SHA-256 digests only (like api_keys.hash). Partial unique indexes: a digest names one session,
    // and a redeemed ticket or a session not yet given its token leaves no index entry. The revocation
    // poll reads revoked_at; the prune reads expires_at.
    version: 15,
    name: 'console sessions',
    statements: [
      `CREATE TABLE console_sessions (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        user_id text NOT NULL,
        token_hash text,
        ticket_hash text,
        ticket_expires_at timestamptz NOT NULL,
        subject text NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz
      )`,
      `CREATE UNIQUE INDEX console_sessions_token ON console_sessions (token_hash) WHERE token_hash IS NOT NULL`,
      `CREATE UNIQUE INDEX console_sessions_ticket ON console_sessions (ticket_hash) WHERE ticket_hash IS NOT NULL`,
      `CREATE INDEX console_sessions_revoked ON console_sessions (revoked_at) WHERE revoked_at IS NOT NULL`,
      `CREATE INDEX console_sessions_expires ON console_sessions (expires_at)`,
    ],
  },
  // Versions 13 and 14 belong to the console's keys and lists and to usage and budgets (issue 20).
  {
    // An agent's run page (GET /v1/agents/{agentId}, RunRepository.page) is read through
    // runs_agent_created (agent_id, created_at DESC, id DESC): the page's own rows. With 100,000 runs the
    // planner preferred the small B-tree on created_at alone, scanned backwards with the agent as a filter
    // and an incremental sort on top (rows of every other agent read and dropped; the bench's list point
    // at docs/performance.md). That index serves only the retention prune (created_at < cutoff); runs
    // arrive in time order, so a BRIN index finds them as well (as for the audit and usage records,
    // migration 2), costs next to nothing per run and is never a candidate for an ordered page.
    version: 16,
    name: 'runs created_at index as BRIN',
    statements: [`DROP INDEX runs_created`, `CREATE INDEX runs_created ON runs USING brin (created_at) WITH (autosummarize = on)`],
  },
  {
    // GET /v1/usage and the budgets counted by the store summed every raw audit and usage row of their
    // window: a 30-day day-by-model grouping read ~340,000 rows (5.5 s cold) with 1,000,000 audit records.
    // Per-UTC-day totals, kept by the very statement (or COPY transaction) that writes a batch of audit
    // and usage records (usage-repository.ts, addDayTotals), answer whole days; only a window's partial
    // first and last day are read raw. Filled here from the records already written. NULLS NOT DISTINCT:
    // a call without a user or key adds to the one row of its (org, day, model).
    version: 17,
    name: 'usage totals per UTC day',
    statements: [
      `CREATE TABLE usage_day_totals (
        org_id text NOT NULL,
        day date NOT NULL,
        model text,
        user_id text,
        key_id text,
        requests bigint NOT NULL,
        prompt_tokens bigint NOT NULL,
        cached_prompt_tokens bigint NOT NULL,
        completion_tokens bigint NOT NULL,
        cost double precision NOT NULL
      )`,
      `CREATE UNIQUE INDEX usage_day_totals_key ON usage_day_totals (org_id, day, model, user_id, key_id) NULLS NOT DISTINCT`,
      BACKFILL_USAGE_DAY_TOTALS,
    ],
  },
  {
    // A stored stream wrote one row per event (28 for a short answer), each its own jsonb value and
    // primary-key entry: most of the database's CPU per stored response. A row now holds the events of
    // one response that one event-log write carried (a chunk: usually one to three per response), as
    // json text (kept as sent, not decomposed; U+0000 included). Existing events move as one-event
    // chunks. The key includes last_seq: a retried write that carries more events than the one that
    // committed adds a chunk instead of replacing it (the reader keeps the first copy of each number).
    version: 18,
    name: 'response events stored in chunks',
    statements: [
      `CREATE TABLE response_event_chunks (
        response_id text NOT NULL,
        first_seq integer NOT NULL,
        last_seq integer NOT NULL,
        events json NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (response_id, first_seq, last_seq)
      )`,
      `INSERT INTO response_event_chunks (response_id, first_seq, last_seq, events, created_at)
       SELECT response_id, sequence_number, sequence_number, json_build_array(json_build_object('e', event, 'd', data)), created_at
       FROM response_events`,
      `DROP TABLE response_events`,
      `ALTER TABLE response_event_chunks RENAME TO response_events`,
      `ALTER INDEX response_event_chunks_pkey RENAME TO response_events_pkey`,
    ],
  },
  {
    // Migration 13's four audit indexes (user, key, operation, model) were paid on every API call for
    // filters an administrator uses now and then: on the embedded database, whose process shares the
    // gateway's core, they were 45% of its work per call (25.9 -> 14.3 µs; the json c64 soak 11,600 ->
    // 14,300 calls/s). The listing index now carries those columns and the status in its leaf entries
    // (INCLUDE: stored, not sorted by), so a filtered page is an index-only walk of the organization's
    // entries in time order that skips the others without reading the table, then a lookup of the
    // page's rows by key (audit-repository.ts). Error pages keep their partial index (written only for
    // errors). The cost moved to the reader, and grows with rarity: a filter matching one call in 300
    // walks ~300 entries per row returned; a value with no calls walks the organization's whole trail
    // (or its since/until window).
    version: 19,
    name: 'audit filters read from the listing index',
    statements: [
      `CREATE UNIQUE INDEX audit_records_org_at_id_2 ON audit_records (org_id, at, id) INCLUDE (user_id, key_id, operation_id, model, status) NULLS NOT DISTINCT`,
      `DROP INDEX audit_records_org_at_id`,
      `ALTER INDEX audit_records_org_at_id_2 RENAME TO audit_records_org_at_id`,
      `DROP INDEX audit_records_org_user_at`,
      `DROP INDEX audit_records_org_key_at`,
      `DROP INDEX audit_records_org_operation_at`,
      `DROP INDEX audit_records_org_model_at`,
    ],
  },
];

/** Applies missing migrations; idempotent and safe from several processes at once. */
export async function migrateSql(db: SqlDatabase): Promise<number[]> {
  // Unbounded: an index built on a large table, or a wait for another process's migrations.
  return db.transaction(applyMissing, { unbounded: true });
}

async function applyMissing(tx: SqlExecutor): Promise<number[]> {
  // Transaction-scoped advisory lock, keyed by schema so test schemas in one database don't queue
  // behind each other. A second process waits here, then finds every migration applied.
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('agent-gateway-migrate:' || current_schema()))`);
  await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const applied = new Set((await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
  const done: number[] = [];
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    for (const statement of migration.statements) await tx.query(statement);
    await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    done.push(migration.version);
  }
  return done;
}
