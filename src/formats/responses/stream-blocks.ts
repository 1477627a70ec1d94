// The stream state of each output item a ResponsesEventStream is building, and what a failure
// reports. A block is opened by a stream part's *-start, filled by its deltas and closed by its *-end;
// its item is rendered from it whenever an event or a snapshot needs it.
import { GatewayError } from '../../http/errors';
import { functionCallItem, messageItem, outputText, reasoningItem } from './output-items';
import type { ItemStatus, OutputItem, StreamErrorPayload } from './wire-types';

export interface TextBlock {
  kind: 'text';
  outputIndex: number;
  itemId: string;
  text: string;
  open: boolean;
}

export interface ToolCallBlock {
  kind: 'tool-call';
  outputIndex: number;
  itemId: string;
  callId: string;
  name: string;
  arguments: string;
  open: boolean;
}

export interface ReasoningBlock {
  kind: 'reasoning';
  outputIndex: number;
  itemId: string;
  text: string;
  /** Whether the summary part was added (on the first text). */
  summaryAdded: boolean;
  redactedData?: string;
  encryptedContent?: string;
  signature?: string;
  open: boolean;
}

export interface NativeBlock {
  kind: 'native';
  outputIndex: number;
  item: OutputItem;
  open: false;
}

export type Block = TextBlock | ToolCallBlock | ReasoningBlock | NativeBlock;

/** The error a failure reports: a GatewayError's own, else a generic stream error (no internals leak). */
export function streamErrorOf(err: unknown): StreamErrorPayload {
  if (err instanceof GatewayError) return { type: err.type, code: err.wireCode ?? 'stream_error', message: err.message, param: err.param ?? null };
  return { type: 'server_error', code: 'stream_error', message: 'The model stream failed before the response was complete.', param: null };
}

/** The source ended without a finish part (an upstream connection cut between chunks). */
export const endedEarly = (): GatewayError =>
  new GatewayError('upstream_error', 'The model stream ended before the response was complete.', { type: 'server_error', wireCode: 'stream_error' });

/** The output item of a block, with the status given. */
export function itemOfBlock(block: Block, status: ItemStatus): OutputItem {
  switch (block.kind) {
    case 'text':
      return messageItem(block.itemId, status, [outputText(block.text)]);
    case 'tool-call':
      return functionCallItem(block.itemId, status, block.callId, block.name, block.arguments);
    case 'reasoning':
      return reasoningItem(block.itemId, block.text === '' ? [] : [block.text], block);
    case 'native':
      return block.item;
  }
}
