// The demo provider's deterministic answer to a canonical request (the same rules as demoReply for
// chat bodies): a `step_verdict` judge request gets a parsable verdict, a JSON response format gets
// `{"reply": ...}`, anything else `Demo reply to: <the last user text>`.
import type { Message, ModelRequest } from '../../canonical/model';

/** The text of a message: its text parts (a tool message: its results' text), joined by spaces. */
export function demoMessageText(message: Message | undefined): string {
  if (!message) return '';
  const texts: string[] = [];
  for (const part of message.content) {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'tool-result') {
      if (typeof part.output === 'string') texts.push(part.output);
      else for (const piece of part.output) if (piece.type === 'text') texts.push(piece.text);
    }
  }
  return texts.filter(Boolean).join(' ');
}

/** A rough token count (4 characters a token, at least 1), as the demo bills. */
export function demoTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

export function demoModelReply(request: ModelRequest): string {
  const format = request.options.responseFormat;
  const lastUser = [...request.messages].reverse().find((message) => message.role === 'user');
  const prompt = demoMessageText(lastUser).replace(/\s+/g, ' ').trim();
  if (format?.type === 'json_schema' && format.name === 'step_verdict') {
    // Judge request: the objective passes when the step produced any output.
    const produced = /output:\s*\S/i.test(prompt) || prompt.length > 0;
    return JSON.stringify({
      verdict: produced ? 'pass' : 'fail',
      explanation: produced ? 'The demo judge found output for the objective.' : 'The step produced no output.',
    });
  }
  const excerpt = prompt.length > 200 ? `${prompt.slice(0, 200)}…` : prompt;
  const reply = `Demo reply to: ${excerpt || '(no user text)'}`;
  if (format?.type === 'json_object' || format?.type === 'json_schema') return JSON.stringify({ reply });
  return reply;
}
