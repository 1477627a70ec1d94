// DLP on chat completions and legacy completions bodies: every text the upstream receives is
// inspected. Chat: message content (string; text, input_text, output_text and refusal parts; inline
// text files, decoded and re-encoded), author names, assistant refusals, tool-call and function-call
// arguments, predicted output, tool and function definitions (descriptions and the text of their
// parameter schemas), the response_format schema, stop sequences and the end-user id; parts of a type
// not listed here have all their string values inspected. Images and audio are media, not text, and
// pass; function names are identifiers the model's calls must match and pass. Files that cannot be
// inspected are refused (inline-file.ts). Legacy completions: prompt, suffix, stop and user. The
// walks edit the request's own copy in place.
import type { Redactor } from '../../pipeline/context';
import { redactFileObject } from '../dlp/inline-file';
import { redactJsonSchema } from '../dlp/redact-json-schema';
import { isRecord, redactField, redactJsonText, redactStrings, type JsonRecord } from '../dlp/redact-values';

const MEDIA_PARTS = new Set(['image_url', 'input_image', 'input_audio']);
const PART_STRUCTURE: ReadonlySet<string> = new Set(['type', 'id']);

/**
 * A content part: files are decoded (or refused), media passes; every other part (text, refusal and
 * types not known here) has all its string values inspected, whatever their field or shape (a `text`
 * sent as an array, annotations), since they all reach the upstream.
 */
function redactPart(part: unknown, redactor: Redactor, param: string): void {
  if (!isRecord(part)) return;
  const type = part['type'];
  if (type === 'file' && isRecord(part['file'])) redactFileObject(part['file'], redactor, `${param}.file`);
  else if (type === 'input_file') redactFileObject(part, redactor, param);
  else if (typeof type !== 'string' || !MEDIA_PARTS.has(type)) redactStrings(part, redactor, PART_STRUCTURE);
}

/** Redacts `holder[key]`: string content or an array of parts. */
export function redactChatContent(holder: JsonRecord, key: string, redactor: Redactor, param: string): void {
  const content = holder[key];
  if (Array.isArray(content)) content.forEach((part, j) => redactPart(part, redactor, `${param}[${j}]`));
  else redactField(holder, key, redactor);
}

/** Redacts every message of a chat `messages` array, in place. */
export function redactChatMessages(messages: unknown[], redactor: Redactor): void {
  messages.forEach((message, i) => {
    if (!isRecord(message)) return;
    redactChatContent(message, 'content', redactor, `messages[${i}].content`);
    redactField(message, 'name', redactor);
    redactField(message, 'refusal', redactor);
    const toolCalls = message['tool_calls'];
    if (Array.isArray(toolCalls)) {
      for (const call of toolCalls) if (isRecord(call) && isRecord(call['function'])) redactJsonText(call['function'], 'arguments', redactor);
    }
    if (isRecord(message['function_call'])) redactJsonText(message['function_call'], 'arguments', redactor);
  });
}

/** A function definition (`{name, description, parameters}`): its description and schema text. */
function redactFunctionDefinition(fn: unknown, redactor: Redactor): void {
  if (!isRecord(fn)) return;
  redactField(fn, 'description', redactor);
  redactJsonSchema(fn['parameters'], redactor);
}

/** `tools` (function tools, and the description of custom tools) and the deprecated `functions`. */
function redactToolDefinitions(copy: JsonRecord, redactor: Redactor): void {
  if (Array.isArray(copy['tools'])) {
    const tools = structuredClone(copy['tools']) as unknown[];
    for (const tool of tools) {
      if (!isRecord(tool)) continue;
      redactFunctionDefinition(tool['function'], redactor);
      if (isRecord(tool['custom'])) redactField(tool['custom'], 'description', redactor);
    }
    copy['tools'] = tools;
  }
  if (Array.isArray(copy['functions'])) {
    const functions = structuredClone(copy['functions']) as unknown[];
    for (const fn of functions) redactFunctionDefinition(fn, redactor);
    copy['functions'] = functions;
  }
}

/** `stop` (a string or strings) and `user`: caller text the upstream receives, though not the prompt. */
function redactStopAndUser(copy: JsonRecord, redactor: Redactor): void {
  const stop = copy['stop'];
  if (typeof stop === 'string') redactField(copy, 'stop', redactor);
  else if (Array.isArray(stop)) copy['stop'] = stop.map((entry: unknown) => (typeof entry === 'string' && entry !== '' ? redactor.redact(entry).text : entry));
  redactField(copy, 'user', redactor);
}

/** Redacts a chat completions body copy in place (every field it edits deep-copied first). */
export function redactChatRequest(copy: JsonRecord, redactor: Redactor): void {
  if (Array.isArray(copy['messages'])) {
    const messages = structuredClone(copy['messages']) as unknown[];
    redactChatMessages(messages, redactor);
    copy['messages'] = messages;
  }
  if (isRecord(copy['prediction'])) {
    const prediction = structuredClone(copy['prediction']);
    redactChatContent(prediction, 'content', redactor, 'prediction.content');
    copy['prediction'] = prediction;
  }
  redactToolDefinitions(copy, redactor);
  if (isRecord(copy['response_format']) && isRecord(copy['response_format']['json_schema'])) {
    const format = structuredClone(copy['response_format']);
    const jsonSchema = format['json_schema'] as JsonRecord;
    redactField(jsonSchema, 'description', redactor);
    redactJsonSchema(jsonSchema['schema'], redactor);
    copy['response_format'] = format;
  }
  redactStopAndUser(copy, redactor);
}

/** Redacts a legacy completions body copy in place: `prompt` (string or strings), `suffix`, `stop`, `user`. */
export function redactCompletionRequest(copy: JsonRecord, redactor: Redactor): void {
  // A string, strings, or token arrays (numbers, untouched); strings nested anywhere are inspected too.
  redactField(copy, 'prompt', redactor);
  redactField(copy, 'suffix', redactor);
  redactStopAndUser(copy, redactor);
}
