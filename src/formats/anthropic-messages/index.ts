// The Anthropic Messages client format (POST /v1/messages) ⇄ the canonical model.
export { messagesRequestToCanonical } from './messages-request-to-canonical';
export { canonicalToMessage } from './canonical-to-message';
export { MessageEventStream, canonicalToMessageEvents } from './canonical-to-message-events';
export type { MessageEvent, MessagesMessage } from './messages-wire-types';
// The converters through the chat-shaped canonical request, used by the route until it moves to the
// ones above (they import provider types, which formats must not; they go when the route switches).
export { messagesRequestToChat } from './messages-request-to-chat';
export { chatCompletionToMessage } from './chat-completion-to-message';
export { chatChunksToMessageEvents } from './chat-chunks-to-message-events';
