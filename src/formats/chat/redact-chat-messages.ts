// DLP on chat messages: the organization's redactor runs over every text the model would read
// (string content and `text` parts); images, audio and tool-call arguments are left as they are.
// Returns a new messages array only when something was redacted, so an untouched body can still be
// forwarded as the caller's original bytes.
import type { Redactor } from '../../pipeline/context';
import type { ChatMessage, JsonObject } from '../../providers/types';

function redactParts(parts: JsonObject[], redactor: Redactor): JsonObject[] | null {
  let out: JsonObject[] | null = null;
  for (let i = 0; i < parts.length; i += 1) {
    const part = parts[i]!;
    const text = part['text'];
    if (typeof text !== 'string' || (part['type'] !== 'text' && part['type'] !== undefined)) continue;
    const result = redactor.redact(text);
    if (result.count === 0) continue;
    out ??= parts.slice();
    out[i] = { ...part, text: result.text };
  }
  return out;
}

/** Redacted copy of `messages`, or null when no text needed redacting. */
export function redactChatMessages(messages: readonly ChatMessage[], redactor: Redactor): ChatMessage[] | null {
  let out: ChatMessage[] | null = null;
  for (let i = 0; i < messages.length; i += 1) {
    const message = messages[i]!;
    const { content } = message;
    let replaced: ChatMessage['content'] | undefined;
    if (typeof content === 'string') {
      const result = redactor.redact(content);
      if (result.count > 0) replaced = result.text;
    } else if (Array.isArray(content)) {
      const parts = redactParts(content, redactor);
      if (parts) replaced = parts;
    }
    if (replaced === undefined) continue;
    out ??= messages.slice();
    out[i] = { ...message, content: replaced };
  }
  return out;
}

/** Redacts a legacy-completions `prompt` (string or array of strings); null when unchanged. */
export function redactPrompt(prompt: unknown, redactor: Redactor): unknown {
  if (typeof prompt === 'string') {
    const result = redactor.redact(prompt);
    return result.count > 0 ? result.text : null;
  }
  if (Array.isArray(prompt)) {
    let changed = false;
    const out = prompt.map((entry: unknown) => {
      if (typeof entry !== 'string') return entry;
      const result = redactor.redact(entry);
      if (result.count > 0) changed = true;
      return result.text;
    });
    return changed ? out : null;
  }
  return null;
}
