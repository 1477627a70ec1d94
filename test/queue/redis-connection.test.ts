// The process's shared Redis connection (src/queue/redis.ts: rate limits, budgets, live events) when
// Redis stops answering without closing the connection, as a host gone in a failover does: the
// connection is dropped and made again rather than kept until the kernel gives up on it.
import assert from 'node:assert/strict';
import { createRedisProvider } from '../../src/queue/redis';
import { startTcpProxy } from '../helpers/process';
import { waitFor, within } from '../helpers/wait';

const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';

describe('the shared Redis connection', function () {
  this.timeout(30_000);

  it('a connection whose commands get no answer for 5 s is made again: commands after that are answered', async () => {
    const proxy = await startTcpProxy(Number(new URL(REDIS_URL).port || 6379));
    const redis = createRedisProvider(`redis://127.0.0.1:${proxy.port}`);
    try {
      assert.equal(await redis.get().ping(), 'PONG');
      let dropped = false;
      redis.get().once('close', () => (dropped = true));
      proxy.silence();
      // Lost on the way (its bytes dropped): it never gets an answer on this connection.
      const lost = redis
        .get()
        .ping()
        .then(
          () => 'answered',
          () => 'failed',
        );
      // The connection is dropped 5 s after the PING went out with nothing received (without the
      // socket timeout, not before the kernel gives up on it: the wait's ceiling fails the test).
      await waitFor(() => dropped, { what: 'the silent connection dropped', timeoutMs: 15_000 });
      proxy.heal();
      // Without the socket timeout this PING goes out on the old connection, and Redis's answer is
      // taken for the lost one's (answers are matched in order): it waits forever.
      const next = await within(8_000, redis.get().ping());
      assert.notEqual(next, 'still waiting');
      if (next !== 'still waiting') assert.equal(next.value, 'PONG', next.error?.message);
      // The lost one was sent again on the new connection (ioredis resends what was not answered).
      assert.equal(await lost, 'answered');
    } finally {
      proxy.heal();
      await redis.close();
      await proxy.close();
    }
  });
});
