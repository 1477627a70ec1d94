// DLP on an Anthropic Messages body: every text the upstream receives is inspected. `system` (string
// or text blocks) and each message's content: text blocks, tool_use inputs, tool_result content
// (string or nested blocks), documents (text sources; base64 text files decoded and re-encoded;
// content sources; title and context), search results; blocks of a type not listed here have all
// their string values inspected. Images are media and pass; thinking blocks pass, since they are
// signed by the provider that wrote them and an edited one is refused. A document that cannot be
// inspected (binary base64, a URL or a file id the upstream would fetch) is refused, as is a block of
// another type naming a file by id (`container_upload`). Tool definitions:
// the description and the text of the `input_schema` (never its keywords or property names; tool names
// are identifiers the model's calls must match and pass). Stop sequences and `metadata.user_id` are
// caller text the upstream receives, so they are inspected too. The walk edits the request's own copy
// in place.
import type { Redactor } from '../../pipeline/context';
import { redactBase64Text, uninspectable } from '../dlp/inline-file';
import { redactJsonSchema } from '../dlp/redact-json-schema';
import { isRecord, redactData, redactField, redactStrings, type JsonRecord } from '../dlp/redact-values';

/** Properties the upstream reads as structure (ids, types, signatures), never as text. */
const STRUCTURE: ReadonlySet<string> = new Set(['type', 'id', 'tool_use_id', 'name', 'signature', 'cache_control', 'media_type', 'encrypted_content']);
const PASS = new Set(['image', 'thinking', 'redacted_thinking']);

function redactDocumentSource(source: unknown, redactor: Redactor, param: string): void {
  if (!isRecord(source)) throw uninspectable(param, 'A document source that is not an object cannot be inspected');
  const type = source['type'];
  if (type === 'text') redactField(source, 'data', redactor);
  else if (type === 'content') redactBlocksIn(source, 'content', redactor, `${param}.content`);
  else if (type === 'base64' && typeof source['data'] === 'string') {
    const mediaType = typeof source['media_type'] === 'string' ? source['media_type'] : '';
    source['data'] = redactBase64Text(source['data'], mediaType, null, redactor, `${param}.data`);
  } else if (type === 'url') throw uninspectable(`${param}.url`, 'A document referenced by URL cannot be inspected');
  else if (type === 'file') throw uninspectable(`${param}.file_id`, 'A document referenced by file_id cannot be inspected');
  else throw uninspectable(param, `A document source of type ${JSON.stringify(type)} cannot be inspected`);
}

function redactBlock(block: unknown, redactor: Redactor, param: string): void {
  if (!isRecord(block)) return;
  const type = block['type'];
  if (typeof type === 'string' && PASS.has(type)) return;
  switch (type) {
    case 'text':
      // The text, and the quoted text of its citations.
      redactStrings(block, redactor, STRUCTURE);
      return;
    case 'tool_use':
    case 'server_tool_use':
      block['input'] = redactData(block['input'], redactor);
      return;
    case 'tool_result':
      redactBlocksIn(block, 'content', redactor, `${param}.content`);
      return;
    case 'document':
      redactDocumentSource(block['source'], redactor, `${param}.source`);
      redactField(block, 'title', redactor);
      redactField(block, 'context', redactor);
      return;
    case 'search_result':
      redactField(block, 'title', redactor);
      redactField(block, 'source', redactor);
      redactBlocksIn(block, 'content', redactor, `${param}.content`);
      return;
    default:
      // A file the upstream would load by id (a `container_upload` for code execution) was never seen here.
      if (block['file_id'] !== undefined) throw uninspectable(`${param}.file_id`, `A ${String(type)} block referencing a file by file_id cannot be inspected`);
      redactStrings(block, redactor, STRUCTURE);
  }
}

/** Redacts `holder[key]`: a string or an array of content blocks. */
function redactBlocksIn(holder: JsonRecord, key: string, redactor: Redactor, param: string): void {
  const content = holder[key];
  if (Array.isArray(content)) content.forEach((block, j) => redactBlock(block, redactor, `${param}[${j}]`));
  else redactField(holder, key, redactor);
}

/** Redacts a Messages body copy in place (every field it edits deep-copied first). */
export function redactMessagesRequest(copy: JsonRecord, redactor: Redactor): void {
  if (copy['system'] !== undefined && copy['system'] !== null) {
    const holder: JsonRecord = { system: structuredClone(copy['system']) };
    redactBlocksIn(holder, 'system', redactor, 'system');
    copy['system'] = holder['system'];
  }
  if (Array.isArray(copy['messages'])) {
    const messages = structuredClone(copy['messages']) as unknown[];
    messages.forEach((message, i) => {
      if (isRecord(message)) redactBlocksIn(message, 'content', redactor, `messages[${i}].content`);
    });
    copy['messages'] = messages;
  }
  if (Array.isArray(copy['tools'])) {
    const tools = structuredClone(copy['tools']) as unknown[];
    for (const tool of tools) {
      if (!isRecord(tool)) continue;
      redactField(tool, 'description', redactor);
      redactJsonSchema(tool['input_schema'], redactor);
    }
    copy['tools'] = tools;
  }
  if (Array.isArray(copy['stop_sequences'])) {
    copy['stop_sequences'] = (copy['stop_sequences'] as unknown[]).map((entry) =>
      typeof entry === 'string' && entry !== '' ? redactor.redact(entry).text : entry,
    );
  }
  if (isRecord(copy['metadata'])) {
    const metadata = { ...copy['metadata'] };
    redactField(metadata, 'user_id', redactor);
    copy['metadata'] = metadata;
  }
}
