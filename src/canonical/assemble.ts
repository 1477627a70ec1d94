// Conversions between the two shapes of a reply: a stream of parts folded into a ModelResponse (a
// caller that wants JSON from an upstream call made as a stream), and a ModelResponse unfolded into
// parts (a provider whose upstream answered whole, asked for a stream).
import type { AssistantPart, ModelResponse, ReasoningPart, StreamPart, ToolCallPart } from './model';
import { NO_USAGE } from './model';

/** Folds stream parts into the reply they describe. Throws the error of an `error` part. */
export async function assembleResponse(parts: AsyncIterable<StreamPart>): Promise<ModelResponse> {
  const assembler = new ResponseAssembler();
  for await (const part of parts) assembler.push(part);
  return assembler.response;
}

/** The reply so far, part by part (a consumer that passes the parts on as it folds them: the tool loop). */
export class ResponseAssembler {
  readonly response: ModelResponse = { id: '', model: '', created: 0, content: [], finishReason: 'other', usage: { ...NO_USAGE } };
  // Open blocks by id; a block's part is placed in content when it opens, so interleaved blocks keep
  // the order in which they began.
  private readonly open = new Map<string, AssistantPart>();

  /** Folds one part in. Throws the error of an `error` part. */
  push(part: StreamPart): void {
    const { response, open } = this;
    switch (part.type) {
      case 'start':
        response.id = part.id;
        response.model = part.model;
        response.created = part.created;
        break;
      case 'text-start': {
        const block: AssistantPart = part.refusal === true ? { type: 'text', text: '', refusal: true } : { type: 'text', text: '' };
        open.set(part.id, block);
        response.content.push(block);
        break;
      }
      case 'text-delta': {
        const block = open.get(part.id);
        if (block?.type === 'text') block.text += part.delta;
        break;
      }
      case 'reasoning-start': {
        const block: ReasoningPart = { type: 'reasoning', text: '' };
        if (part.redactedData !== undefined) block.redactedData = part.redactedData;
        if (part.encryptedContent !== undefined) block.encryptedContent = part.encryptedContent;
        open.set(part.id, block);
        response.content.push(block);
        break;
      }
      case 'reasoning-delta': {
        const block = open.get(part.id);
        if (block?.type === 'reasoning') block.text += part.delta;
        break;
      }
      case 'reasoning-end': {
        const block = open.get(part.id);
        if (block?.type === 'reasoning' && part.signature !== undefined) block.signature = part.signature;
        open.delete(part.id);
        break;
      }
      case 'tool-call-start': {
        const block: ToolCallPart = { type: 'tool-call', id: part.callId, name: part.name, arguments: '' };
        open.set(part.id, block);
        response.content.push(block);
        break;
      }
      case 'tool-call-delta': {
        const block = open.get(part.id);
        if (block?.type === 'tool-call') block.arguments += part.delta;
        break;
      }
      case 'text-end':
      case 'tool-call-end':
        open.delete(part.id);
        break;
      case 'native':
        response.content.push({ type: 'native', format: part.format, value: part.value });
        break;
      case 'finish':
        response.finishReason = part.finishReason;
        if (part.rawFinishReason !== undefined) response.rawFinishReason = part.rawFinishReason;
        if (part.stopSequence !== undefined) response.stopSequence = part.stopSequence;
        response.usage = part.usage;
        break;
      case 'server-tool-result':
        // The gateway's own record of a tool it ran: not something the model said.
        break;
      case 'error':
        throw part.error;
    }
  }
}

/** Unfolds a whole reply into the parts of a stream (block ids `b0`, `b1`, ... in content order). */
export function* responseToParts(response: ModelResponse, textChunks: (text: string) => Iterable<string> = (t) => [t]): Iterable<StreamPart> {
  yield { type: 'start', id: response.id, model: response.model, created: response.created };
  let n = 0;
  for (const block of response.content) {
    const id = `b${n++}`;
    switch (block.type) {
      case 'text':
        yield block.refusal === true ? { type: 'text-start', id, refusal: true } : { type: 'text-start', id };
        for (const delta of textChunks(block.text)) if (delta !== '') yield { type: 'text-delta', id, delta };
        yield { type: 'text-end', id };
        break;
      case 'reasoning': {
        const start: StreamPart = { type: 'reasoning-start', id };
        if (block.redactedData !== undefined) start.redactedData = block.redactedData;
        if (block.encryptedContent !== undefined) start.encryptedContent = block.encryptedContent;
        yield start;
        if (block.text !== '') yield { type: 'reasoning-delta', id, delta: block.text };
        yield block.signature !== undefined ? { type: 'reasoning-end', id, signature: block.signature } : { type: 'reasoning-end', id };
        break;
      }
      case 'tool-call':
        yield { type: 'tool-call-start', id, callId: block.id, name: block.name };
        if (block.arguments !== '') yield { type: 'tool-call-delta', id, delta: block.arguments };
        yield { type: 'tool-call-end', id };
        break;
      case 'native':
        yield { type: 'native', format: block.format, value: block.value };
        break;
    }
  }
  const finish: StreamPart = { type: 'finish', finishReason: response.finishReason, usage: response.usage };
  if (response.rawFinishReason !== undefined) finish.rawFinishReason = response.rawFinishReason;
  if (response.stopSequence !== undefined) finish.stopSequence = response.stopSequence;
  yield finish;
}

/** The text of a reply: its text parts joined. */
export function responseText(response: Pick<ModelResponse, 'content'>): string {
  let text = '';
  for (const part of response.content) if (part.type === 'text') text += part.text;
  return text;
}
