// A minimal check of our Responses objects and events against the Open Responses specification
// (openresponses/openresponses, public/openapi/openapi.json, version 2026-04-24): the schemas the
// gateway's output must satisfy (ResponseResource, ItemField, the streaming events), transcribed as
// their required fields and types. Used until the vendored copy of the whole document
// (test/fixtures/open-responses/openapi.json) is on main; then these checks should read it instead.
//
// One deliberate deviation: the spec types JsonSchemaResponseFormat.schema as `{type: null}`, which
// no echoed json_schema format can satisfy (OpenAI echoes the caller's schema object); here it is any
// JSON value.
import Ajv2020, { type ErrorObject } from 'ajv/dist/2020';

type Schema = Record<string, unknown>;

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const num: Schema = { type: 'number' };
const bool: Schema = { type: 'boolean' };
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const literal = (value: string): Schema => ({ type: 'string', enum: [value] });
const oneOf = (...names: string[]): Schema => ({ oneOf: names.map(ref) });
const arrayOf = (items: Schema): Schema => ({ type: 'array', items });
const object = (required: string[], properties: Record<string, Schema>): Schema => ({ type: 'object', required, properties });

const ITEM_STATUS: Schema = { type: 'string', enum: ['in_progress', 'completed', 'incomplete'] };
const CONTENT_PARTS = [
  'InputTextContent',
  'OutputTextContent',
  'TextContent',
  'SummaryTextContent',
  'ReasoningTextContent',
  'RefusalContent',
  'InputImageContent',
  'InputFileContent',
];

const sequenced = (type: string, required: string[], properties: Record<string, Schema>): Schema =>
  object(['type', 'sequence_number', ...required], { type: literal(type), sequence_number: int, ...properties });
const lifecycle = (type: string): Schema => sequenced(type, ['response'], { response: ref('ResponseResource') });
const where = { item_id: str, output_index: int };
const contentWhere = { ...where, content_index: int };
const summaryWhere = { ...where, summary_index: int };

const schemas: Record<string, Schema> = {
  InputTextContent: object(['type', 'text'], { type: literal('input_text'), text: str }),
  UrlCitationBody: object(['type', 'url', 'start_index', 'end_index', 'title'], {
    type: literal('url_citation'),
    url: str,
    start_index: int,
    end_index: int,
    title: str,
  }),
  TopLogProb: object(['token', 'logprob', 'bytes'], { token: str, logprob: num, bytes: arrayOf(int) }),
  LogProb: object(['token', 'logprob', 'bytes', 'top_logprobs'], { token: str, logprob: num, bytes: arrayOf(int), top_logprobs: arrayOf(ref('TopLogProb')) }),
  OutputTextContent: object(['type', 'text', 'annotations'], {
    type: literal('output_text'),
    text: str,
    annotations: arrayOf(ref('UrlCitationBody')),
    logprobs: arrayOf(ref('LogProb')),
  }),
  TextContent: object(['type', 'text'], { type: literal('text'), text: str }),
  SummaryTextContent: object(['type', 'text'], { type: literal('summary_text'), text: str }),
  ReasoningTextContent: object(['type', 'text'], { type: literal('reasoning_text'), text: str }),
  RefusalContent: object(['type', 'refusal'], { type: literal('refusal'), refusal: str }),
  InputImageContent: object(['type', 'image_url', 'detail'], {
    type: literal('input_image'),
    image_url: nullable(str),
    detail: { type: 'string', enum: ['low', 'high', 'auto'] },
  }),
  InputFileContent: object(['type'], { type: literal('input_file'), filename: str, file_url: str }),
  InputVideoContent: object(['type', 'video_url'], { type: literal('input_video'), video_url: str }),
  Message: object(['type', 'id', 'status', 'role', 'content'], {
    type: literal('message'),
    id: str,
    status: ITEM_STATUS,
    role: { type: 'string', enum: ['user', 'assistant', 'system', 'developer'] },
    content: arrayOf(oneOf(...CONTENT_PARTS, 'InputVideoContent')),
  }),
  FunctionCall: object(['type', 'id', 'call_id', 'name', 'arguments', 'status'], {
    type: literal('function_call'),
    id: str,
    call_id: str,
    name: str,
    arguments: str,
    status: ITEM_STATUS,
  }),
  FunctionCallOutput: object(['type', 'id', 'call_id', 'output', 'status'], {
    type: literal('function_call_output'),
    id: str,
    call_id: str,
    output: { oneOf: [str, arrayOf(oneOf('InputTextContent', 'InputImageContent', 'InputFileContent'))] },
    status: ITEM_STATUS,
  }),
  ReasoningBody: object(['type', 'id', 'summary'], {
    type: literal('reasoning'),
    id: str,
    content: arrayOf(oneOf(...CONTENT_PARTS)),
    summary: arrayOf(oneOf(...CONTENT_PARTS)),
    encrypted_content: str,
  }),
  CompactionBody: object(['type', 'id', 'encrypted_content'], { type: literal('compaction'), id: str, encrypted_content: str, created_by: str }),
  ItemField: oneOf('Message', 'FunctionCall', 'FunctionCallOutput', 'ReasoningBody', 'CompactionBody'),
  Error: object(['code', 'message'], { code: str, message: str }),
  FunctionTool: object(['type', 'name', 'description', 'parameters', 'strict'], {
    type: literal('function'),
    name: str,
    description: nullable(str),
    parameters: nullable({ type: 'object' }),
    strict: nullable(bool),
  }),
  FunctionToolChoice: object(['type'], { type: literal('function'), name: str }),
  ToolChoiceValueEnum: { type: 'string', enum: ['none', 'auto', 'required'] },
  AllowedToolChoice: object(['type', 'tools', 'mode'], {
    type: literal('allowed_tools'),
    tools: arrayOf(ref('FunctionToolChoice')),
    mode: ref('ToolChoiceValueEnum'),
  }),
  TextResponseFormat: object(['type'], { type: literal('text') }),
  JsonObjectResponseFormat: object(['type'], { type: literal('json_object') }),
  JsonSchemaResponseFormat: object(['type', 'name', 'description', 'schema', 'strict'], {
    type: literal('json_schema'),
    name: str,
    description: nullable(str),
    schema: {}, // the spec's `{type: null}`: see the header
    strict: bool,
  }),
  TextField: object(['format'], {
    format: oneOf('TextResponseFormat', 'JsonObjectResponseFormat', 'JsonSchemaResponseFormat'),
    verbosity: { type: 'string', enum: ['low', 'medium', 'high'] },
  }),
  Reasoning: object(['effort', 'summary'], {
    effort: nullable({ type: 'string', enum: ['none', 'low', 'medium', 'high', 'xhigh'] }),
    summary: nullable({ type: 'string', enum: ['concise', 'detailed', 'auto'] }),
  }),
  Usage: object(['input_tokens', 'output_tokens', 'total_tokens', 'input_tokens_details', 'output_tokens_details'], {
    input_tokens: int,
    output_tokens: int,
    total_tokens: int,
    input_tokens_details: object(['cached_tokens'], { cached_tokens: int }),
    output_tokens_details: object(['reasoning_tokens'], { reasoning_tokens: int }),
  }),
  ResponseResource: object(
    [
      'id',
      'object',
      'created_at',
      'completed_at',
      'status',
      'incomplete_details',
      'model',
      'previous_response_id',
      'instructions',
      'output',
      'error',
      'tools',
      'tool_choice',
      'truncation',
      'parallel_tool_calls',
      'text',
      'top_p',
      'presence_penalty',
      'frequency_penalty',
      'top_logprobs',
      'temperature',
      'reasoning',
      'usage',
      'max_output_tokens',
      'max_tool_calls',
      'store',
      'background',
      'service_tier',
      'metadata',
      'safety_identifier',
      'prompt_cache_key',
    ],
    {
      id: str,
      object: literal('response'),
      created_at: int,
      completed_at: nullable(int),
      status: str,
      incomplete_details: nullable(object(['reason'], { reason: str })),
      model: str,
      previous_response_id: nullable(str),
      instructions: nullable(str),
      output: arrayOf(ref('ItemField')),
      error: nullable(ref('Error')),
      tools: arrayOf(ref('FunctionTool')),
      tool_choice: oneOf('FunctionToolChoice', 'ToolChoiceValueEnum', 'AllowedToolChoice'),
      truncation: { type: 'string', enum: ['auto', 'disabled'] },
      parallel_tool_calls: bool,
      text: ref('TextField'),
      top_p: num,
      presence_penalty: num,
      frequency_penalty: num,
      top_logprobs: int,
      temperature: num,
      reasoning: nullable(ref('Reasoning')),
      usage: nullable(ref('Usage')),
      max_output_tokens: nullable(int),
      max_tool_calls: nullable(int),
      store: bool,
      background: bool,
      service_tier: str,
      metadata: {},
      safety_identifier: nullable(str),
      prompt_cache_key: nullable(str),
    },
  ),
  ErrorPayload: object(['type', 'code', 'message', 'param'], { type: str, code: nullable(str), message: str, param: nullable(str) }),
};

/** The streaming event schemas by event type. */
const EVENT_SCHEMAS: Record<string, Schema> = {
  'response.created': lifecycle('response.created'),
  'response.in_progress': lifecycle('response.in_progress'),
  'response.completed': lifecycle('response.completed'),
  'response.incomplete': lifecycle('response.incomplete'),
  'response.failed': lifecycle('response.failed'),
  'response.output_item.added': sequenced('response.output_item.added', ['output_index', 'item'], { output_index: int, item: nullable(ref('ItemField')) }),
  'response.output_item.done': sequenced('response.output_item.done', ['output_index', 'item'], { output_index: int, item: nullable(ref('ItemField')) }),
  'response.content_part.added': sequenced('response.content_part.added', ['item_id', 'output_index', 'content_index', 'part'], {
    ...contentWhere,
    part: oneOf(...CONTENT_PARTS),
  }),
  'response.content_part.done': sequenced('response.content_part.done', ['item_id', 'output_index', 'content_index', 'part'], {
    ...contentWhere,
    part: oneOf(...CONTENT_PARTS),
  }),
  'response.output_text.delta': sequenced('response.output_text.delta', ['item_id', 'output_index', 'content_index', 'delta'], {
    ...contentWhere,
    delta: str,
    logprobs: arrayOf(ref('LogProb')),
  }),
  'response.output_text.done': sequenced('response.output_text.done', ['item_id', 'output_index', 'content_index', 'text'], {
    ...contentWhere,
    text: str,
    logprobs: arrayOf(ref('LogProb')),
  }),
  'response.refusal.delta': sequenced('response.refusal.delta', ['item_id', 'output_index', 'content_index', 'delta'], { ...contentWhere, delta: str }),
  'response.refusal.done': sequenced('response.refusal.done', ['item_id', 'output_index', 'content_index', 'refusal'], { ...contentWhere, refusal: str }),
  'response.function_call_arguments.delta': sequenced('response.function_call_arguments.delta', ['item_id', 'output_index', 'delta'], { ...where, delta: str }),
  'response.function_call_arguments.done': sequenced('response.function_call_arguments.done', ['item_id', 'output_index', 'arguments'], {
    ...where,
    arguments: str,
  }),
  'response.reasoning_summary_part.added': sequenced('response.reasoning_summary_part.added', ['item_id', 'output_index', 'summary_index', 'part'], {
    ...summaryWhere,
    part: oneOf(...CONTENT_PARTS),
  }),
  'response.reasoning_summary_part.done': sequenced('response.reasoning_summary_part.done', ['item_id', 'output_index', 'summary_index', 'part'], {
    ...summaryWhere,
    part: oneOf(...CONTENT_PARTS),
  }),
  'response.reasoning_summary_text.delta': sequenced('response.reasoning_summary_text.delta', ['item_id', 'output_index', 'summary_index', 'delta'], {
    ...summaryWhere,
    delta: str,
  }),
  'response.reasoning_summary_text.done': sequenced('response.reasoning_summary_text.done', ['item_id', 'output_index', 'summary_index', 'text'], {
    ...summaryWhere,
    text: str,
  }),
  error: sequenced('error', ['error'], { error: ref('ErrorPayload') }),
};

const ajv = new Ajv2020({ allErrors: true, strict: false });
ajv.addSchema(
  { components: { schemas: { ...schemas, ...Object.fromEntries(Object.entries(EVENT_SCHEMAS).map(([type, s]) => [`Event_${type}`, s])) } } },
  'open-responses',
);

function check(name: string, value: unknown): string[] {
  const validate = ajv.getSchema(`open-responses#/components/schemas/${name}`);
  if (!validate) throw new Error(`no Open Responses schema ${name}`);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Violations of ResponseResource (empty: valid). */
export function responseResourceErrors(response: unknown): string[] {
  return check('ResponseResource', response);
}

/** Violations of the event's schema, chosen by its type (an event type the spec lacks is one violation). */
export function streamingEventErrors(event: { type: string }): string[] {
  if (!(event.type in EVENT_SCHEMAS)) return [`no Open Responses schema for event type ${event.type}`];
  return check(`Event_${event.type}`, event);
}
