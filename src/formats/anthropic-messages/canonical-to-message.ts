// A canonical reply → the Anthropic message object a /v1/messages caller gets from a translated
// provider (https://docs.anthropic.com/en/api/messages): thinking blocks with their signatures,
// redacted thinking, text, tool_use with the parsed input, and native Messages blocks verbatim
// (native parts of other formats have no Messages form and are left out).
import type { ModelResponse } from '../../canonical/model';
import { messageId, messagesStopReason, messagesUsage, parseToolInput } from './messages-reply-fields';
import type { MessagesContentBlock, MessagesMessage } from './messages-wire-types';

/** `model` is the caller's model id (echoed), not the upstream's name. */
export function canonicalToMessage(response: ModelResponse, model: string): MessagesMessage {
  const content: MessagesContentBlock[] = [];
  let calledTools = false;
  // Whether tools were called does not bear on a refusal.
  const saysRefusal = messagesStopReason({ ...response, calledTools: false }) === 'refusal';
  for (const part of response.content) {
    switch (part.type) {
      case 'reasoning':
        if (part.redactedData !== undefined) content.push({ type: 'redacted_thinking', data: part.redactedData });
        else content.push({ type: 'thinking', thinking: part.text, signature: part.signature ?? '' });
        break;
      case 'text':
        // Messages has no refusal block: its stop_reason `refusal` says it, as Anthropic's own replies
        // do (no text added). A refusal the stop reason does not carry (an OpenAI-format upstream's) is text.
        if (!(part.refusal === true && saysRefusal)) content.push({ type: 'text', text: part.text });
        break;
      case 'tool-call':
        calledTools = true;
        content.push({ type: 'tool_use', id: part.id, name: part.name, input: parseToolInput(part.arguments) });
        break;
      case 'native':
        if (part.format === 'messages') content.push({ ...part.value, type: String(part.value['type']) });
        break;
    }
  }
  // Clients commonly read content[0].text: an empty reply is one empty text block, never an empty list.
  if (content.length === 0) content.push({ type: 'text', text: '' });
  return {
    id: messageId(response.id),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: messagesStopReason({ ...response, calledTools }),
    stop_sequence: response.stopSequence ?? null,
    usage: messagesUsage(response.usage),
  };
}
