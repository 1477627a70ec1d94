// Cursor and webhook-token codecs: round trip, and everything we did not issue rejected.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decodeCursor, encodeCursor } from '../../src/agents/cursor';
import { agentUpsert, canonicalJson } from '../../src/agents/definition';
import { verifyWebhookToken, webhookToken } from '../../src/agents/webhook-token';
import type { AgentConfig } from '../../src/config/types';

const AGENT = '3f9a2c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b';
const OTHER = '7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d';

describe('pagination cursor', () => {
  const secret = randomBytes(32);
  const position = { createdAt: '2024-05-01T10:00:00.000Z', id: '0b8e4a52-4f0e-4b8e-9d55-6f2b3e1c9a10' };

  it('round-trips a keyset position', () => {
    assert.deepEqual(decodeCursor(secret, AGENT, encodeCursor(secret, AGENT, position)), position);
  });
  it('rejects a cursor of another agent, another installation, edited, or made up', () => {
    const cursor = encodeCursor(secret, AGENT, position);
    assert.equal(decodeCursor(secret, OTHER, cursor), null);
    assert.equal(decodeCursor(randomBytes(32), AGENT, cursor), null);
    const forged = Buffer.from(JSON.stringify(['2030-01-01T00:00:00.000Z', position.id])).toString('base64url');
    assert.equal(decodeCursor(secret, AGENT, `${forged}${cursor.slice(cursor.indexOf('.'))}`), null);
    for (const junk of ['', 'abc', '.', 'a.b', 'x'.repeat(600)]) assert.equal(decodeCursor(secret, AGENT, junk), null);
  });
  it('does not carry date filters (only the position)', () => {
    const payload = Buffer.from(encodeCursor(secret, AGENT, position).split('.')[0]!, 'base64url').toString();
    assert.deepEqual(JSON.parse(payload), [position.createdAt, position.id]);
  });
});

describe('webhook token', () => {
  const secret = randomBytes(32);
  it('is stable for (agent, trigger index) and verifies back to them', () => {
    const token = webhookToken(secret, AGENT, 1);
    assert.equal(token, webhookToken(secret, AGENT, 1));
    assert.notEqual(token, webhookToken(secret, AGENT, 0));
    assert.deepEqual(verifyWebhookToken(secret, token), { agentId: AGENT, triggerIndex: 1 });
  });
  it('rejects a token with another agent or index, another secret, or junk', () => {
    const token = webhookToken(secret, AGENT, 1);
    const mac = token.split('.')[2]!;
    assert.equal(verifyWebhookToken(secret, `${OTHER}.1.${mac}`), null);
    assert.equal(verifyWebhookToken(secret, `${AGENT}.0.${mac}`), null);
    assert.equal(verifyWebhookToken(randomBytes(32), token), null);
    for (const junk of ['', 'a.b.c', `${AGENT}.1`, `${AGENT}.x.${mac}`, `${token}.x`]) assert.equal(verifyWebhookToken(secret, junk), null);
  });
});

describe('agent definition hash', () => {
  const base: AgentConfig = {
    id: AGENT,
    organization: 'acme',
    name: 'A',
    description: 'd',
    createdBy: 'u-admin',
    sharedWith: [],
    model: 'demo',
    instructions: 'i',
    inputs: [{ label: 'Topic', required: true }],
    tools: [],
    steps: [{ name: 'S', prompt: 'p', objective: 'o' }],
    timeoutSeconds: 60,
    triggers: [],
  };
  it('is independent of key order and changes with any edit of the definition', () => {
    const reordered = JSON.parse(canonicalJson(base)) as AgentConfig;
    assert.equal(agentUpsert(reordered, 'Admin').definitionHash, agentUpsert(base, 'Admin').definitionHash);
    assert.notEqual(agentUpsert({ ...base, instructions: 'j' }, 'Admin').definitionHash, agentUpsert(base, 'Admin').definitionHash);
    assert.notEqual(agentUpsert({ ...base, steps: [{ name: 'S', prompt: 'p' }] }, 'Admin').definitionHash, agentUpsert(base, 'Admin').definitionHash);
  });
  it('canonical JSON sorts keys and drops undefined members', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: undefined, c: [1, 'x'] } }), '{"a":{"c":[1,"x"]},"b":1}');
  });
});
