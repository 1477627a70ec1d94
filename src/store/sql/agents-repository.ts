import type { Permission } from '../../config/types';
import type { AgentRepository } from '../port';
import type { AgentDefinition, AgentRecord, AgentShare, AgentUpsert, AgentVersionRecord, VisibleAgent } from '../types';
import type { SqlDatabase } from './database';
import { agentModelsSql, agentPermissionsSql, iso, isoOrNull, json, nowIso, principalParams, sqlParams, type Timestamp } from './rows';

interface AgentRow {
  id: string;
  org_id: string;
  version: number;
  created_by: string;
  creator_name: string;
  definition: AgentDefinition;
  definition_hash: string;
  shared_with: AgentShare[];
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

interface VersionRow {
  agent_id: string;
  version: number;
  definition: AgentDefinition;
  definition_hash: string;
  created_at: Timestamp;
}

export function definitionOf(agent: AgentDefinition): AgentDefinition {
  return {
    name: agent.name,
    description: agent.description,
    model: agent.model,
    instructions: agent.instructions,
    inputs: agent.inputs,
    tools: agent.tools,
    steps: agent.steps,
    timeoutSeconds: agent.timeoutSeconds,
    triggers: agent.triggers,
    sharedWith: agent.sharedWith,
  };
}

function toAgent(row: AgentRow): AgentRecord {
  return {
    ...definitionOf(row.definition),
    id: row.id,
    orgId: row.org_id,
    version: row.version,
    createdBy: row.created_by,
    creatorName: row.creator_name,
    definitionHash: row.definition_hash,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    deletedAt: isoOrNull(row.deleted_at),
  };
}

function toVersion(row: VersionRow): AgentVersionRecord {
  return {
    agentId: row.agent_id,
    version: row.version,
    definition: definitionOf(row.definition),
    definitionHash: row.definition_hash,
    createdAt: iso(row.created_at),
  };
}

const PERMISSIONS = agentPermissionsSql('a', { user: '$2', role: '$3', groups: '$4' });

export function sqlAgents(db: SqlDatabase): AgentRepository {
  return {
    async upsert(agent: AgentUpsert) {
      const now = nowIso();
      const definition = json(definitionOf(agent));
      return db.transaction(async (tx) => {
        const inserted = await tx.query<AgentRow>(
          `INSERT INTO agents (id, org_id, version, created_by, creator_name, definition, definition_hash, shared_with, created_at, updated_at, deleted_at)
           VALUES ($1, $2, 1, $3, $4, $5::jsonb, $6, $7::jsonb, $8, $8, NULL)
           ON CONFLICT (id) DO NOTHING RETURNING *`,
          [agent.id, agent.orgId, agent.createdBy, agent.creatorName, definition, agent.definitionHash, json(agent.sharedWith), now],
        );
        const [created] = inserted;
        if (created) {
          await tx.query('INSERT INTO agent_versions (agent_id, version, definition, definition_hash, created_at) VALUES ($1, 1, $2::jsonb, $3, $4)', [
            agent.id,
            definition,
            agent.definitionHash,
            now,
          ]);
          return { agent: toAgent(created), changed: true };
        }
        // Row lock: concurrent upserts of one agent (several gateways starting) make one version, not two.
        const [current] = await tx.query<AgentRow>('SELECT * FROM agents WHERE id = $1 FOR UPDATE', [agent.id]);
        if (!current) throw new Error(`agent ${agent.id} vanished during upsert`);
        if (current.definition_hash === agent.definitionHash) {
          const [row] = await tx.query<AgentRow>(
            `UPDATE agents SET deleted_at = NULL, org_id = $2, created_by = $3, creator_name = $4,
               updated_at = CASE WHEN deleted_at IS NULL AND org_id = $2 AND created_by = $3 AND creator_name = $4 THEN updated_at ELSE $5::timestamptz END
             WHERE id = $1 RETURNING *`,
            [agent.id, agent.orgId, agent.createdBy, agent.creatorName, now],
          );
          if (!row) throw new Error(`agent ${agent.id} vanished during upsert`);
          return { agent: toAgent(row), changed: false };
        }
        const version = current.version + 1;
        await tx.query('INSERT INTO agent_versions (agent_id, version, definition, definition_hash, created_at) VALUES ($1, $2, $3::jsonb, $4, $5)', [
          agent.id,
          version,
          definition,
          agent.definitionHash,
          now,
        ]);
        const [row] = await tx.query<AgentRow>(
          `UPDATE agents SET version = $2, org_id = $3, created_by = $4, creator_name = $5, definition = $6::jsonb,
             definition_hash = $7, shared_with = $8::jsonb, updated_at = $9, deleted_at = NULL
           WHERE id = $1 RETURNING *`,
          [agent.id, version, agent.orgId, agent.createdBy, agent.creatorName, definition, agent.definitionHash, json(agent.sharedWith), now],
        );
        if (!row) throw new Error(`agent ${agent.id} vanished during upsert`);
        return { agent: toAgent(row), changed: true };
      });
    },
    async softDeleteExcept(keep, at) {
      const rows = await db.query<{ id: string }>(
        'UPDATE agents SET deleted_at = $2, updated_at = $2 WHERE deleted_at IS NULL AND NOT (id = ANY($1::text[])) RETURNING id',
        [keep, at],
      );
      return rows.map((r) => r.id).sort();
    },
    async listVisible(principal, limit) {
      const { params, bind } = sqlParams([...principalParams(principal), limit]);
      const models = agentModelsSql('a', principal, bind);
      const rows = await db.query<AgentRow & { permissions: Permission[] }>(
        `SELECT a.*, v.permissions FROM agents a CROSS JOIN LATERAL (SELECT ${PERMISSIONS} AS permissions) v
         WHERE a.org_id = $1 AND a.deleted_at IS NULL AND cardinality(v.permissions) > 0${models ? ` AND ${models}` : ''}
         ORDER BY a.created_at DESC, a.id DESC LIMIT $5`,
        params,
      );
      return rows.map((row): VisibleAgent => ({ ...toAgent(row), permissions: row.permissions }));
    },
    async getVisible(principal, agentId) {
      const { params, bind } = sqlParams([...principalParams(principal), agentId]);
      const models = agentModelsSql('a', principal, bind);
      const [row] = await db.query<AgentRow & { permissions: Permission[] }>(
        `SELECT a.*, v.permissions FROM agents a CROSS JOIN LATERAL (SELECT ${PERMISSIONS} AS permissions) v
         WHERE a.org_id = $1 AND a.id = $5 AND a.deleted_at IS NULL AND cardinality(v.permissions) > 0${models ? ` AND ${models}` : ''}`,
        params,
      );
      return row ? { ...toAgent(row), permissions: row.permissions } : null;
    },
    async get(agentId) {
      const [row] = await db.query<AgentRow>('SELECT * FROM agents WHERE id = $1', [agentId]);
      return row ? toAgent(row) : null;
    },
    async getVersion(agentId, version) {
      const [row] = await db.query<VersionRow>('SELECT * FROM agent_versions WHERE agent_id = $1 AND version = $2', [agentId, version]);
      return row ? toVersion(row) : null;
    },
    async listActive() {
      return (await db.query<AgentRow>('SELECT * FROM agents WHERE deleted_at IS NULL ORDER BY created_at, id')).map(toAgent);
    },
  };
}
