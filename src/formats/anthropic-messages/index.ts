// The Anthropic Messages client format (POST /v1/messages) ⇄ the canonical model.
export { messagesRequestToCanonical } from './messages-request-to-canonical';
export { canonicalToMessage } from './canonical-to-message';
export { MessageEventStream, canonicalToMessageEvents } from './canonical-to-message-events';
export type { MessageEvent, MessagesMessage } from './messages-wire-types';
