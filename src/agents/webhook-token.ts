// Secret webhook URLs: POST /v1/webhooks/{token} starts a run of the agent as its creator. The token
// is `<agentId>.<triggerIndex>.<mac>` where mac = HMAC-SHA256(installation secret, agentId, index):
// nothing secret is stored per agent, the URL is stable across restarts and processes, and the
// agent id in clear lets a POST find its agent with one lookup (the mac is what makes it secret).
// Rotating the `webhook-secret` setting invalidates every webhook URL at once.
import { createHmac, timingSafeEqual } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function mac(secret: Buffer, agentId: string, triggerIndex: number): Buffer {
  return createHmac('sha256', secret).update(`webhook\0${agentId}\0${triggerIndex}`).digest();
}

export function webhookToken(secret: Buffer, agentId: string, triggerIndex: number): string {
  return `${agentId}.${triggerIndex}.${mac(secret, agentId, triggerIndex).toString('base64url')}`;
}

/** The agent and trigger the token was issued for, or null for any token we did not issue. */
export function verifyWebhookToken(secret: Buffer, token: string): { agentId: string; triggerIndex: number } | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const [agentId, index, given] = parts as [string, string, string];
  if (!UUID.test(agentId) || !/^\d{1,4}$/.test(index)) return null;
  const triggerIndex = Number(index);
  const expected = mac(secret, agentId, triggerIndex);
  const received = Buffer.from(given, 'base64url');
  // Constant-time comparison of equal-length buffers (a length mismatch reveals nothing secret).
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) return null;
  return { agentId: agentId, triggerIndex };
}
