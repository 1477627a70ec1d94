import type { Logger } from 'winston';
import type { QueueConfig } from '../config/types';
import { BullmqQueue } from './bullmq-queue';
import { InlineQueue } from './inline-queue';
import type { RunQueue } from './port';

/** The run queue of the configured driver. */
export function createRunQueue(config: QueueConfig, logger: Logger): RunQueue {
  if (config.driver === 'bullmq') {
    return new BullmqQueue({ redisUrl: config.redisUrl, prefix: config.prefix, logger, lockDurationMs: config.leaseSeconds * 1000 });
  }
  return new InlineQueue(logger);
}
