// The model gateway: chat completions, legacy completions, Anthropic-style messages.
import { pending } from '../pending';
import type { Handler } from '../types';

export const gatewayHandlers: Readonly<Record<string, Handler>> = {
  createChatCompletion: pending('createChatCompletion'),
  createCompletion: pending('createCompletion'),
  createMessage: pending('createMessage'),
};
