// Start-up check of the queue's Redis, before the store is opened or a port is taken: an unreachable
// queue must stop the process with one readable line, not a stream of reconnect errors.
import { Redis } from 'ioredis';
import { redactUrl } from '../store/index';
import { CliError } from './args';

export async function probeRedis(url: string, timeoutMs = 5000): Promise<void> {
  // One attempt, no reconnects, no offline queue: the first failure is the answer.
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let lastError: Error | null = null;
  client.on('error', (err: Error) => (lastError = err));
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    const cause = (lastError ?? err) as NodeJS.ErrnoException;
    const reason = cause.code && !cause.message.includes(cause.code) ? `${cause.code}: ${cause.message}` : cause.message;
    throw new CliError(`cannot reach Redis at ${redactUrl(url)} (queue.redisUrl): ${reason.split('\n')[0]}`);
  } finally {
    client.disconnect();
  }
}
