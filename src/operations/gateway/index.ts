// The model gateway: chat completions, legacy completions, Anthropic-style messages.
import type { Handler } from '../types';
import { createChatCompletion } from './create-chat-completion';
import { createCompletion } from './create-completion';
import { createMessage } from './create-message';

export const gatewayHandlers: Readonly<Record<string, Handler>> = {
  createChatCompletion,
  createCompletion,
  createMessage,
};
