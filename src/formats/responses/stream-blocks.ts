// The stream state of each output item a ResponsesEventStream is building, and what a failure
// reports. A block is opened by a stream part's *-start, filled by its deltas and closed by its *-end;
// its item is rendered from it whenever an event or a snapshot needs it.
import { GatewayError } from '../../http/errors';
import { functionCallItem, mcpCallItem, messageContent, messageItem, reasoningItem, svcCallItem } from './output-items';
import type { ItemStatus, OutputItem, ServerCallStatus, StreamErrorPayload } from './wire-types';

export interface TextBlock {
  kind: 'text';
  outputIndex: number;
  itemId: string;
  text: string;
  /** The model's refusal: a `refusal` content part (refusal events) instead of `output_text`. */
  refusal?: boolean;
  open: boolean;
  /** Generation stopped while this item was being written (token limit, content filter): done as `incomplete`. */
  cut?: boolean;
}

export interface ToolCallBlock {
  kind: 'tool-call';
  outputIndex: number;
  itemId: string;
  callId: string;
  name: string;
  arguments: string;
  open: boolean;
  /** Generation stopped while this call was being written (token limit, content filter): done as `incomplete`. */
  cut?: boolean;
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

/**
 * A server-side tool call (hosted `svc_*` or MCP): opened and filled like a function call, its
 * arguments closed at the call's end, and the item done only when the gateway has run it
 * (`server-tool-result`).
 */
export interface ServerCallBlock {
  kind: 'server-call';
  item: 'svc_call' | 'mcp_call';
  outputIndex: number;
  itemId: string;
  callId: string;
  /** The hosted tool's type, or the MCP tool's own name. */
  name: string;
  serverLabel: string;
  arguments: string;
  output: string | null;
  error: string | null;
  status: ServerCallStatus;
  open: boolean;
}

export type Block = TextBlock | ToolCallBlock | ReasoningBlock | NativeBlock | ServerCallBlock;

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
      return messageItem(block.itemId, status, [messageContent(block.text, block.refusal)]);
    case 'tool-call':
      return functionCallItem(block.itemId, status, block.callId, block.name, block.arguments);
    case 'reasoning':
      return reasoningItem(block.itemId, block.text === '' ? [] : [block.text], block);
    case 'native':
      return block.item;
    case 'server-call': {
      // An unfinished call of a failed response failed with it; else it is as far as it got.
      const callStatus: ServerCallStatus = block.open ? (status === 'incomplete' ? 'failed' : 'in_progress') : block.status;
      return block.item === 'svc_call'
        ? svcCallItem(block.itemId, callStatus, block.callId, block.name, block.arguments, block.output, block.error)
        : mcpCallItem(block.itemId, callStatus, block.serverLabel, block.name, block.arguments, block.output, block.error);
    }
  }
}
