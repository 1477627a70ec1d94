// The deployments the client tests run against: a real gateway on the embedded store with the inline
// queue, and on PostgreSQL with BullMQ (Redis), each serving two models: `gpt-native` on an OpenAI
// provider whose upstream speaks Responses (`responses: native`, the fake OpenAI upstream), and
// `claude-translated` on the Anthropic provider (the fake Anthropic upstream), reached through the
// canonical model. The SDKs under test are the real packages, pointed at the gateway's URL.
import { randomBytes } from 'node:crypto';
import { textMessage } from '../../fixtures/upstreams/anthropic-events';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from '../../fixtures/upstreams/anthropic-upstream';
import { startFakeOpenAiUpstream, type FakeOpenAiUpstream } from '../../fixtures/upstreams/openai-upstream';
import { responsesBody, responsesStreamEvents } from '../../fixtures/upstreams/responses-wire';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../../helpers/gateway';
import { openTestStore, type TestStore } from '../../helpers/store';

const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';

export const DEPLOYMENTS = ['embedded/inline', 'postgres/bullmq'] as const;
export type Deployment = (typeof DEPLOYMENTS)[number];

/** The two kinds of provider a Responses request can reach. */
export const UPSTREAMS = ['native', 'anthropic'] as const;
export type UpstreamKind = (typeof UPSTREAMS)[number];

export const MODEL_OF: Record<UpstreamKind, string> = { native: 'gpt-native', anthropic: 'claude-translated' };
/** The model name each upstream is sent (the gateway swaps the caller's alias for it). */
export const UPSTREAM_MODEL_OF: Record<UpstreamKind, string> = { native: 'gpt-4.1-upstream', anthropic: 'claude-sonnet-4-20250514' };

/** The member's key: every client authenticates as a member of organization `acme`. */
export const API_KEY = TEST_KEYS.member;

export interface ClientEnvironment {
  readonly deployment: Deployment;
  readonly gw: TestGateway;
  /** The gateway's base URL as SDKs take it (with /v1). */
  readonly baseURL: string;
  readonly openai: FakeOpenAiUpstream;
  readonly anthropic: FakeAnthropic;
  close(): Promise<void>;
}

export async function startClientEnvironment(deployment: Deployment): Promise<ClientEnvironment> {
  const [driver, queue] = deployment.split('/') as ['embedded' | 'postgres', 'inline' | 'bullmq'];
  const openai = await startFakeOpenAiUpstream();
  const anthropic = await startFakeAnthropic();
  let store: TestStore | null = null;
  try {
    store = await openTestStore(driver);
    const gw = await startTestGateway({
      store: store.store,
      config: {
        store: store.config,
        queue: queue === 'bullmq' ? { driver: 'bullmq', redisUrl: REDIS_URL, prefix: `agwsdk${randomBytes(4).toString('hex')}` } : { driver: 'inline' },
        providers: {
          demo: { type: 'demo' },
          native: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-upstream-native', responses: 'native', retries: { max: 0 } },
          claude: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: FAKE_ANTHROPIC_KEY, retries: { max: 0 } },
        },
        models: [
          { id: 'demo', provider: 'demo', created: 1700000000 },
          { id: MODEL_OF.native, provider: 'native', upstream: UPSTREAM_MODEL_OF.native },
          { id: MODEL_OF.anthropic, provider: 'claude', upstream: UPSTREAM_MODEL_OF.anthropic },
        ],
        plugins: { auth: { enabled: true } },
      },
    });
    const owned = store;
    return {
      deployment,
      gw,
      baseURL: `${gw.url}/v1`,
      openai,
      anthropic,
      async close() {
        await gw.close();
        await owned.cleanup();
        await openai.close();
        await anthropic.close();
      },
    };
  } catch (err) {
    await store?.cleanup();
    await openai.close();
    await anthropic.close();
    throw err;
  }
}

/** A streamed Anthropic text reply (message_start … message_stop) whose text arrives in `pieces`. */
export function anthropicTextEvents(pieces: readonly string[], usage = { input_tokens: 21, output_tokens: 6 }): Record<string, unknown>[] {
  return [
    {
      type: 'message_start',
      message: {
        id: 'msg_01Text',
        type: 'message',
        role: 'assistant',
        model: UPSTREAM_MODEL_OF.anthropic,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ...pieces.map((text) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } },
    { type: 'message_stop' },
  ];
}

export interface TextReply {
  /** The reply's text, in the pieces a stream sends it in. */
  pieces: readonly string[];
  usage: { input_tokens: number; output_tokens: number };
  /** The upstream's response id (native upstreams; unique per reply, as a stored response's id is the upstream's). */
  id: string;
}

/** Queues one text reply on `upstream`'s fake, in the upstream's own wire format, streamed or not. */
export function scriptText(
  env: ClientEnvironment,
  upstream: UpstreamKind,
  stream: boolean,
  pieces: readonly string[] = ['Hello', ' from', ' upstream'],
): TextReply {
  const reply: TextReply = { pieces, usage: { input_tokens: 11, output_tokens: 3 }, id: `resp_up${randomBytes(6).toString('hex')}` };
  const text = pieces.join('');
  if (upstream === 'native') {
    const model = UPSTREAM_MODEL_OF.native;
    const options = { id: reply.id, usage: reply.usage };
    env.openai.script(
      stream ? { kind: 'sse', chunks: responsesStreamEvents(model, [...pieces], options) } : { kind: 'json', body: responsesBody(model, text, options) },
    );
  } else {
    env.anthropic.script(
      stream
        ? { kind: 'sse', events: anthropicTextEvents(pieces, reply.usage) }
        : { kind: 'json', body: textMessage(text, { usage: { ...reply.usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }) },
    );
  }
  return reply;
}
