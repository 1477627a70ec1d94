// What differs between the three hostings of the Anthropic family (the Messages body and the event
// stream are the same): where the request goes, how it authenticates, and how a streamed reply is framed.
import type { OptionName } from '../../canonical/model';
import type { UpstreamRequest } from '../http/transport';
import type { AnthropicMessagesBody, AnthropicStreamEvent } from './anthropic-wire-types';

export interface AnthropicHosting {
  /** The HTTP request for a Messages body (the body is the hosting's own copy: it may add fields). */
  prepare(body: AnthropicMessagesBody, upstreamModel: string, stream: boolean, signal: AbortSignal | undefined): Promise<UpstreamRequest>;
  /** A successful streamed reply's bytes → Anthropic stream events. */
  events(body: AsyncIterable<Buffer>): AsyncIterable<AnthropicStreamEvent>;
  /** Pass-through of a client's own Messages body (model already the upstream's), where the hosting's
   *  wire format is exactly the Messages API (Anthropic itself; Bedrock and Vertex move the model into
   *  the URL and frame streams differently, so they go through translation). */
  forwardRequest?(body: string | Buffer, stream: boolean): UpstreamRequest;
  /** Canonical options whose Messages field this hosting removes from the body (the upstream refuses it). */
  readonly unsentOptions?: readonly OptionName[];
  /** The upstream refused the credentials (401): drop cached ones so the next call gets fresh ones. */
  onAuthFailure?(): void;
  close?(): Promise<void>;
}
