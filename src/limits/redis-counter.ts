// Shared counters in Redis (queue.driver bullmq): every gateway process draws on one budget. One
// round trip per request: a Lua script reads, decides and increments all of the request's budgets
// atomically, on Redis's own clock (TIME), so processes with skewed clocks still agree on windows.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ADMITTED, WINDOW_MS, type Budget, type Verdict } from './sliding-window';

// Same arithmetic as sliding-window.ts. Each budget is a hash {w: window index, c: current, p: previous}.
export const RATE_LIMIT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local W = tonumber(ARGV[1])
local win = math.floor(now / W)
local remaining = W - (now - win * W)
local state = {}
for i = 1, #KEYS do
  local limit = tonumber(ARGV[i + 1])
  local v = redis.call('HMGET', KEYS[i], 'w', 'c', 'p')
  local w = tonumber(v[1]) or -2
  local c = tonumber(v[2]) or 0
  local p = tonumber(v[3]) or 0
  if w ~= win then
    if w == win - 1 then p = c else p = 0 end
    c = 0
  end
  if p * remaining / W + c + 1 > limit then
    if c + 1 > limit then
      return {i, remaining + math.ceil(W * (1 - (limit - 1) / c))}
    end
    return {i, math.ceil(remaining - W * (limit - 1 - c) / p)}
  end
  state[i] = {c, p}
end
for i = 1, #KEYS do
  redis.call('HSET', KEYS[i], 'w', win, 'c', state[i][1] + 1, 'p', state[i][2])
  redis.call('PEXPIRE', KEYS[i], W * 2)
end
return {0, 0}
`;

const SCRIPT_SHA = createHash('sha1').update(RATE_LIMIT_SCRIPT).digest('hex');

export class RedisCounter {
  constructor(
    private readonly client: () => Redis,
    /** Prefix of the budget keys, e.g. `agw:rl:`. */
    private readonly prefix: string,
  ) {}

  async hit(budgets: readonly Budget[]): Promise<Verdict> {
    const args: (string | number)[] = budgets.map((b) => this.prefix + b.key);
    args.push(WINDOW_MS);
    for (const budget of budgets) args.push(budget.limit);
    const redis = this.client();
    let reply: unknown;
    try {
      reply = await redis.evalsha(SCRIPT_SHA, budgets.length, ...args);
    } catch (err) {
      // First use on this server (or after SCRIPT FLUSH): load it by sending the body once.
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      reply = await redis.eval(RATE_LIMIT_SCRIPT, budgets.length, ...args);
    }
    const [index, wait] = reply as [number, number];
    return index === 0 ? ADMITTED : { denied: index - 1, retryAfterMs: wait };
  }
}
