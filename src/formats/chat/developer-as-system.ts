// Spec (chat message table): `developer` is treated identically to `system`. OpenAI-format upstreams
// take `developer` as it is; translators for providers without that role call this first.
import type { ChatMessage } from '../../providers/types';

export function developerAsSystem(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message) => (message.role === 'developer' ? { ...message, role: 'system' } : message));
}
