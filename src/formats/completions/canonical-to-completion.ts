// A canonical reply → the text_completion object a legacy completions caller gets from a translated
// provider (https://platform.openai.com/docs/api-reference/completions/object): the reply's text parts
// joined. Reasoning, tool calls and native parts have no place in a legacy completion.
import type { ModelResponse } from '../../canonical/model';
import { responseText } from '../../canonical/assemble';
import { chatUsage } from '../chat/chat-reply-fields';
import { completionFinishReason, completionId } from './completion-reply-fields';
import type { TextCompletion } from './completions-wire-types';

/** `model` is the caller's model id (echoed), not the upstream's name. */
export function canonicalToCompletion(response: ModelResponse, model: string, now: () => number = Date.now): TextCompletion {
  return {
    id: completionId(response.id),
    object: 'text_completion',
    created: response.created > 0 ? response.created : Math.floor(now() / 1000),
    model,
    choices: [{ text: responseText(response), index: 0, logprobs: null, finish_reason: completionFinishReason(response.finishReason) }],
    usage: chatUsage(response.usage),
  };
}
