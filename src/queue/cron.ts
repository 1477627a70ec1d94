// cron-parser, loaded when a schedule trigger is first read. It brings luxon: ~0.5 MB of source that V8
// keeps in the heap, with its compiled code, for the life of a process that loaded it, which a gateway
// without schedule triggers never needs.
import type { CronExpressionParser } from 'cron-parser';

/** cron-parser's expression parser (loaded at the first call; Node's module cache keeps it after). */
export function cronExpressions(): typeof CronExpressionParser {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('cron-parser') as typeof import('cron-parser')).CronExpressionParser;
}
