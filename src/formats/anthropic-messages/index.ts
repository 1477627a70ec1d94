// The Anthropic Messages client format (POST /v1/messages) ⇄ the canonical chat-completions model.
export { messagesRequestToChat } from './messages-request-to-chat';
export { chatCompletionToMessage } from './chat-completion-to-message';
export { chatChunksToMessageEvents, type MessageEvent } from './chat-chunks-to-message-events';
