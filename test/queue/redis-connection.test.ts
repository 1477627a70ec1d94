// The process's shared Redis connection (src/queue/redis.ts: rate limits, budgets, live events) when
// Redis stops answering without closing the connection, as a host gone in a failover does: the
// connection is dropped and made again rather than kept until the kernel gives up on it.
import assert from 'node:assert/strict';
import { createRedisProvider } from '../../src/queue/redis';
import { startTcpProxy } from '../helpers/process';

const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';

describe('the shared Redis connection', function () {
  this.timeout(30_000);

  it('a connection whose commands get no answer for 5 s is made again: commands after that are answered', async () => {
    const proxy = await startTcpProxy(Number(new URL(REDIS_URL).port || 6379));
    const redis = createRedisProvider(`redis://127.0.0.1:${proxy.port}`);
    try {
      assert.equal(await redis.get().ping(), 'PONG');
      proxy.silence();
      // Lost on the way (its bytes dropped): it never gets an answer on this connection.
      const lost = redis
        .get()
        .ping()
        .then(
          () => 'answered',
          () => 'failed',
        );
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      proxy.heal();
      // Without the socket timeout this PING goes out on the old connection, and Redis's answer is
      // taken for the lost one's (answers are matched in order): it waits forever.
      const next = await Promise.race([redis.get().ping(), new Promise((resolve) => setTimeout(() => resolve('still waiting'), 8_000))]);
      assert.equal(next, 'PONG');
      // The lost one was sent again on the new connection (ioredis resends what was not answered).
      assert.equal(await lost, 'answered');
    } finally {
      proxy.heal();
      await redis.close();
      await proxy.close();
    }
  });
});
