import type { Logger } from 'winston';
import type { QueueConfig } from '../config/types';
import { InlineQueue } from './inline-queue';
import type { RunQueue } from './port';

/** The run queue of the configured driver. BullMQ (and ioredis) are loaded only when configured. */
export function createRunQueue(config: QueueConfig, logger: Logger): RunQueue {
  if (config.driver === 'bullmq') {
    // require, not import(): loaded on demand in the CommonJS build and under the test loader alike.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { BullmqQueue } = require('./bullmq-queue') as typeof import('./bullmq-queue');
    return new BullmqQueue({ redisUrl: config.redisUrl, prefix: config.prefix, logger, lockDurationMs: config.leaseSeconds * 1000 });
  }
  return new InlineQueue(logger);
}
