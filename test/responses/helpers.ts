// Builders shared by the response-streams tests: responses as the handler would create them, events as
// a writer would number them, a logger whose lines the test can read, and draining an event stream.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import winston from 'winston';
import { createLogger } from '../../src/log/logger';
import type { StreamEvent } from '../../src/responses/stream-event';
import type { ResponseRecord } from '../../src/store/types';

export function responseId(): string {
  return `resp_${randomUUID().replace(/-/g, '')}`;
}

export function inProgressResponse(overrides: Partial<ResponseRecord> = {}): ResponseRecord {
  const now = new Date().toISOString();
  const id = overrides.id ?? responseId();
  return {
    id,
    orgId: 'acme',
    userId: 'u-member',
    status: 'in_progress',
    model: 'fake',
    conversationId: null,
    previousResponseId: null,
    stored: true,
    body: { id, object: 'response', status: 'in_progress', output: [] },
    inputItems: [{ type: 'message', role: 'user', content: 'hello' }],
    createdAt: now,
    updatedAt: now,
    expiresAt: null,
    lease: null,
    ...overrides,
  };
}

/** Event n of a text stream: 0 created, 1 in_progress, then deltas (or `name` when given). */
export function textEvent(n: number, name?: string, text = `token ${n} `): StreamEvent {
  const event = name ?? (n === 0 ? 'response.created' : n === 1 ? 'response.in_progress' : 'response.output_text.delta');
  const data: Record<string, unknown> = { type: event, sequence_number: n };
  if (event === 'response.output_text.delta') Object.assign(data, { item_id: 'msg_1', output_index: 0, content_index: 0, delta: text });
  return { sequenceNumber: n, event, data };
}

export const COMPLETED_BODY_OUTPUT = [
  { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello there.', annotations: [] }] },
  { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"x"}', status: 'completed' },
];

export function completedEvent(n: number, id: string): StreamEvent {
  return {
    sequenceNumber: n,
    event: 'response.completed',
    data: { type: 'response.completed', sequence_number: n, response: { id, object: 'response', status: 'completed', output: COMPLETED_BODY_OUTPUT } },
  };
}

export interface CapturedLogger {
  logger: winston.Logger;
  lines(): Record<string, unknown>[];
  text(): string;
}

/** The gateway's own logger (its field allowlist included), writing JSON lines the test can read. */
export function capturedLogger(): CapturedLogger {
  const chunks: string[] = [];
  const logger = createLogger({ level: 'debug', silent: false });
  logger.clear();
  logger.add(
    new winston.transports.Stream({
      stream: new Writable({
        write(chunk: Buffer, _encoding, done) {
          chunks.push(chunk.toString());
          done();
        },
      }),
    }),
  );
  return {
    logger,
    text: () => chunks.join(''),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export const silentLogger = createLogger({ level: 'error', silent: true });

/** Every event of the stream (which must end by itself). */
export async function drain(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

export function numbers(events: readonly StreamEvent[]): number[] {
  return events.map((e) => e.sequenceNumber);
}

export function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let n = from; n <= to; n++) out.push(n);
  return out;
}

export async function waitUntil(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
