// The caller wire formats as the model-call path uses them: each format's converter to the canonical
// model and its DLP walker over the wire body (src/formats/<name>/).
import { messagesRequestToCanonical } from '../../formats/anthropic-messages';
import { redactMessagesRequest } from '../../formats/anthropic-messages/redact-messages-request';
import { chatRequestToCanonical } from '../../formats/chat';
import { redactChatRequest, redactCompletionRequest } from '../../formats/chat/redact-chat-messages';
import { completionRequestToCanonical } from '../../formats/completions';
import type { WireCodec } from '../../model-call/wire-call';

export const CHAT_CODEC: WireCodec = { format: 'chat', toCanonical: chatRequestToCanonical, redact: redactChatRequest };
export const COMPLETIONS_CODEC: WireCodec = { format: 'completions', toCanonical: completionRequestToCanonical, redact: redactCompletionRequest };
export const MESSAGES_CODEC: WireCodec = { format: 'messages', toCanonical: messagesRequestToCanonical, redact: redactMessagesRequest };
