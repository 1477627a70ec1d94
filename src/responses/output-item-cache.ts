// Output items of recent stateless responses, for the `item_reference`s clients send back. SDKs that
// assume OpenAI's default `store: true` (the Vercel AI SDK's `openai(model)`) refer to the previous
// step's output items by id instead of resending them; a provider the gateway translates for cannot
// resolve such a reference, and a stateless response is stored nowhere. This process keeps each
// stateless translated response's output items briefly (a tool loop sends its next step within
// seconds), per organization, bounded in count: a reference is resolved from here or refused as
// before. Not a store: nothing here is retrievable by id, survives a restart, or is shared with
// other gateway processes (a deployment behind a round-robin balancer sends `store: true`, or the
// SDK's `store: false`, which sends the whole history). It also keeps the server-side tool calls of
// stored responses, for clients that send such a call back without its result
// (src/operations/responses/server-call-outputs.ts).
type Json = Record<string, unknown>;

interface Entry {
  item: Json;
  expires: number;
}

export const OUTPUT_ITEM_CACHE_DEFAULTS = { maxItems: 10_000, ttlMs: 120_000 } as const;

export class OutputItemCache {
  /** Insertion order is expiry order (one TTL for all): the oldest go first. */
  private readonly items = new Map<string, Entry>();

  constructor(
    private readonly maxItems: number = OUTPUT_ITEM_CACHE_DEFAULTS.maxItems,
    private readonly ttlMs: number = OUTPUT_ITEM_CACHE_DEFAULTS.ttlMs,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.items.size;
  }

  /** Keeps the output items that have an id (messages, function calls, reasoning). */
  remember(orgId: string, output: unknown): void {
    if (!Array.isArray(output)) return;
    const expires = this.now() + this.ttlMs;
    for (const item of output) {
      if (item === null || typeof item !== 'object' || typeof (item as Json)['id'] !== 'string') continue;
      const key = `${orgId}\u0000${(item as Json)['id'] as string}`;
      this.items.delete(key);
      this.items.set(key, { item: item as Json, expires });
    }
    this.evict();
  }

  /** The organization's item with this id, while it is kept. */
  resolve(orgId: string, id: string): Json | undefined {
    const entry = this.items.get(`${orgId}\u0000${id}`);
    if (!entry) return undefined;
    if (entry.expires <= this.now()) {
      this.items.delete(`${orgId}\u0000${id}`);
      return undefined;
    }
    return entry.item;
  }

  private evict(): void {
    const now = this.now();
    for (const [key, entry] of this.items) {
      if (this.items.size <= this.maxItems && entry.expires > now) break;
      this.items.delete(key);
    }
  }
}
