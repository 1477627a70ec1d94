// Pieces of a legacy completion reply shared by the JSON and the stream writers.
import { randomBytes } from 'node:crypto';
import type { FinishReason } from '../../canonical/model';
import type { CompletionFinishReason } from './completions-wire-types';

/** Completion ids read `cmpl-…`; an upstream's own id is kept inside one so it stays traceable. */
export function completionId(id: string): string {
  if (id === '') return `cmpl-${randomBytes(12).toString('hex')}`;
  return id.startsWith('cmpl-') ? id : `cmpl-${id}`;
}

/** Legacy completions know stop, length and content_filter; a reply that ended otherwise stopped. */
export function completionFinishReason(reason: FinishReason): CompletionFinishReason {
  if (reason === 'length' || reason === 'content_filter') return reason;
  return 'stop';
}
