// The stored-conversation driver, a process of its own (like loadgen.ts): drives `conversations`
// conversations to `turns` turns each, `concurrency` conversations at a time, over keep-alive
// connections (undici). Turn 1 is POST /v1/responses with `store: true`; every later turn sends only
// its own input with `previous_response_id` set to the previous turn's id, as an SDK chaining turns
// does, so the gateway loads the conversation's history and appends the turn to it. Each turn's
// latency (request sent to reply read) is recorded by turn number; the first `warmup` conversations
// are driven the same way and not counted. Its one argument is a JSON ConversationLoadOptions; it
// prints one JSON line of results (ConversationLoadResult).
import { Pool } from 'undici';

export interface ConversationLoadOptions {
  /** POST /v1/responses on the gateway. */
  url: string;
  /** An API key for the Authorization header. */
  key: string;
  model: string;
  conversations: number;
  turns: number;
  concurrency: number;
  /** Conversations driven first and not counted (connections opened, code warm). */
  warmup: number;
}

export interface ConversationLoadResult {
  /** Conversations driven to their last turn (counted ones). */
  completed: number;
  /** Turns that failed (not 200, or no completed response); a failed turn ends its conversation. */
  errors: number;
  /** p50 latency (ms) of each turn number, from turn 1; null where no turn of that number finished. */
  p50ByTurn: (number | null)[];
  turn1P50: number | null;
  lastTurnP50: number | null;
  /** The conversation of one counted conversation (the bench's plumbing test reads its items back). */
  conversationId: string | null;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The text of turn `n`: a user message about the size of a chat turn. */
const turnInput = (n: number): string => `Turn ${n}: write one more sentence about foxes, and keep the earlier ones in mind.`;

async function driveConversations(options: ConversationLoadOptions): Promise<ConversationLoadResult> {
  const url = new URL(options.url);
  const pool = new Pool(url.origin, { connections: options.concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${options.key}` };
  const latencies: number[][] = Array.from({ length: options.turns }, () => []);
  let errors = 0;
  let completed = 0;
  let conversationId: string | null = null;
  let next = 0;
  const total = options.warmup + options.conversations;

  /** One turn: its latency and the response's id and conversation, or null when it failed. */
  async function turn(body: Record<string, unknown>): Promise<{ ms: number; id: string; conversation: string | null } | null> {
    const t0 = performance.now();
    try {
      const res = await pool.request({ path: url.pathname, method: 'POST', headers, body: JSON.stringify(body) });
      const text = await res.body.text();
      const ms = performance.now() - t0;
      if (res.statusCode !== 200) return null;
      const reply = JSON.parse(text) as { id?: unknown; status?: unknown; conversation?: { id?: unknown } | null };
      if (reply.status !== 'completed' || typeof reply.id !== 'string') return null;
      return { ms, id: reply.id, conversation: typeof reply.conversation?.id === 'string' ? reply.conversation.id : null };
    } catch {
      return null;
    }
  }

  async function worker(): Promise<void> {
    while (next < total) {
      const index = next++;
      const counted = index >= options.warmup;
      let previous: string | null = null;
      let conversation: string | null = null;
      let finished = true;
      for (let n = 1; n <= options.turns; n++) {
        const body: Record<string, unknown> = { model: options.model, input: turnInput(n) };
        if (previous === null) body['store'] = true;
        else body['previous_response_id'] = previous;
        const result = await turn(body);
        if (!result) {
          if (counted) errors++;
          finished = false;
          break;
        }
        if (counted) latencies[n - 1]!.push(result.ms);
        previous = result.id;
        conversation ??= result.conversation;
      }
      if (counted && finished) {
        completed++;
        conversationId ??= conversation;
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    await pool.close();
  }
  const p50ByTurn = latencies.map(median);
  return { completed, errors, p50ByTurn, turn1P50: p50ByTurn[0] ?? null, lastTurnP50: p50ByTurn[options.turns - 1] ?? null, conversationId };
}

const options = JSON.parse(process.argv[2] ?? '{}') as ConversationLoadOptions;
driveConversations(options)
  .then((result) => process.stdout.write(`${JSON.stringify(result)}\n`))
  .catch((err: unknown) => {
    process.stderr.write(`conversation-load: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
