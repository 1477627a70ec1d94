// How the chat, completions and messages formats turn a canonical part stream into their own stream:
// one renderer per request owns that stream's state, takes the parts one at a time and is told when
// they run out, because parts that stop before their finish part were cut, which is an error, not a reply.
import type { StreamPart } from '../../canonical/model';
import { GatewayError } from '../../http/errors';

export interface PartRenderer<Out> {
  /** What one part produces (often one item, sometimes none). Throws the error of an `error` part. */
  push(part: StreamPart): Out[];
  /** Call when the parts run out: throws streamCutError() when no finish part came. */
  end(): Out[];
}

/** Drives a renderer over a part stream: the form the routes consume. */
export async function* renderParts<Out>(renderer: PartRenderer<Out>, parts: AsyncIterable<StreamPart>): AsyncIterable<Out> {
  for await (const part of parts) yield* renderer.push(part);
  yield* renderer.end();
}

/** The error of a part stream that ended before its finish part. */
export function streamCutError(): GatewayError {
  return new GatewayError('upstream_error', 'The upstream stream ended before the reply was complete.');
}
