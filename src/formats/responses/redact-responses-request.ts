// DLP on a POST /v1/responses body (spec rule 8): every text the model will read is inspected.
// `input` (a string; message content strings and input_text / output_text / refusal parts; the
// arguments of function_call items and the output of function_call_output items, as JSON text when
// they parse), `instructions`, the variables of a reusable `prompt`, tool descriptions and the text
// of function parameter schemas, the `text.format` json_schema (description and schema text), `stop`,
// and the end-user ids `user` and `safety_identifier`. Inline text files (`input_file` file_data of a
// text type) are decoded, redacted and re-encoded; a file that cannot be inspected (binary data, a
// file_id or file_url the upstream would fetch) is a 400 naming the field (inline-file.ts). Items of
// a type not listed here have all their string values inspected but for ids, types and names.
// Passed as they are: images (media, not text; by URL or file_id alike, as on chat and Messages),
// reasoning items (the model's own earlier output, opaque or signed: an edited one is refused
// upstream), `item_reference` ids, tool names, schema keywords and property names, and `metadata`
// (never forwarded). The walk edits the request's own copy in place, deep-copying what it edits; the
// counting redactor of the dlp plugin records what was replaced.
import type { Redactor } from '../../pipeline/context';
import { redactFileObject } from '../dlp/inline-file';
import { redactJsonSchema } from '../dlp/redact-json-schema';
import { isRecord, redactField, redactJsonText, redactStrings, type JsonRecord } from '../dlp/redact-values';

/** Properties read as structure (ids, types, names, opaque state, media), never as text. */
const STRUCTURE: ReadonlySet<string> = new Set(['type', 'id', 'call_id', 'name', 'status', 'server_label', 'encrypted_content', 'image_url', 'file_id']);
/**
 * A content part: a file is decoded (or refused), an image passes; every other part (text, refusal,
 * types not known here) has all its string values inspected but for structure, whatever their field
 * or shape (annotations, logprobs), since they all reach the upstream.
 */
function redactPart(part: unknown, redactor: Redactor, param: string): void {
  if (!isRecord(part)) return;
  const type = part['type'];
  if (type === 'input_file') redactFileObject(part, redactor, param);
  else if (type !== 'input_image') redactStrings(part, redactor, STRUCTURE);
}

/** `holder[key]`: a string, or an array of content parts. */
function redactContent(holder: JsonRecord, key: string, redactor: Redactor, param: string): void {
  const content = holder[key];
  if (Array.isArray(content)) content.forEach((part, j) => redactPart(part, redactor, `${param}[${j}]`));
  else redactField(holder, key, redactor);
}

function redactItem(item: unknown, redactor: Redactor, param: string): void {
  if (!isRecord(item)) return;
  const type = item['type'];
  if (type === 'message' || ((type === undefined || type === null) && item['role'] !== undefined)) {
    redactContent(item, 'content', redactor, `${param}.content`);
    return;
  }
  switch (type) {
    case 'function_call':
      redactJsonText(item, 'arguments', redactor);
      return;
    case 'function_call_output':
      if (typeof item['output'] === 'string') redactJsonText(item, 'output', redactor);
      else redactContent(item, 'output', redactor, `${param}.output`);
      return;
    case 'reasoning':
    case 'item_reference':
      return;
    default:
      redactStrings(item, redactor, STRUCTURE);
  }
}

/** A reusable prompt's variables: strings and input parts, filled into the prompt the model reads. */
function redactPromptVariables(prompt: JsonRecord, redactor: Redactor): void {
  const variables = prompt['variables'];
  if (!isRecord(variables)) return;
  for (const name of Object.keys(variables)) {
    const value = variables[name];
    if (isRecord(value)) redactPart(value, redactor, `prompt.variables.${name}`);
    else redactField(variables, name, redactor);
  }
}

function redactTools(tools: unknown[], redactor: Redactor): void {
  for (const tool of tools) {
    if (!isRecord(tool)) continue;
    redactField(tool, 'description', redactor);
    if (tool['type'] === 'function') redactJsonSchema(tool['parameters'], redactor);
  }
}

/** Redacts a Responses body copy in place (every field it edits deep-copied first). */
export function redactResponsesRequest(copy: JsonRecord, redactor: Redactor): void {
  const input = copy['input'];
  if (typeof input === 'string') redactField(copy, 'input', redactor);
  else if (Array.isArray(input)) {
    const items = structuredClone(input) as unknown[];
    items.forEach((item, i) => redactItem(item, redactor, `input[${i}]`));
    copy['input'] = items;
  }
  redactField(copy, 'instructions', redactor);
  if (isRecord(copy['prompt'])) {
    const prompt = structuredClone(copy['prompt']);
    redactPromptVariables(prompt, redactor);
    copy['prompt'] = prompt;
  }
  if (Array.isArray(copy['tools'])) {
    const tools = structuredClone(copy['tools']) as unknown[];
    redactTools(tools, redactor);
    copy['tools'] = tools;
  }
  if (isRecord(copy['text']) && isRecord(copy['text']['format']) && copy['text']['format']['type'] === 'json_schema') {
    const text = structuredClone(copy['text']);
    const format = text['format'] as JsonRecord;
    redactField(format, 'description', redactor);
    redactJsonSchema(format['schema'], redactor);
    copy['text'] = text;
  }
  const stop = copy['stop'];
  if (typeof stop === 'string') redactField(copy, 'stop', redactor);
  else if (Array.isArray(stop)) copy['stop'] = stop.map((entry: unknown) => (typeof entry === 'string' && entry !== '' ? redactor.redact(entry).text : entry));
  redactField(copy, 'user', redactor);
  redactField(copy, 'safety_identifier', redactor);
}
