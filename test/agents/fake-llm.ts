// A content-driven fake OpenAI chat-completions upstream for run tests (concurrent runs make a scripted
// queue unusable): the reply depends on markers in the request, so each run chooses its own fate.
//   judge request (response_format json_schema `step_verdict`): `OBJ-FAIL` in the messages -> fail,
//     `OBJ-UNKNOWN` -> an unparsable reply, otherwise pass;
//   step request: `BOOM` in the last user message -> 400 (a non-retryable upstream error),
//     `FLAKY` -> 400 while `flaky` is true, `SLOW` -> the reply after `slowMs`, otherwise an answer
//     echoing the prompt.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeLlm {
  readonly baseUrl: string;
  /** Every chat request body received, in order. */
  readonly requests: Record<string, unknown>[];
  flaky: boolean;
  slowMs: number;
  close(): Promise<void>;
}

type Message = { role: string; content: unknown };

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join(' ');
  return '';
}

function completion(model: string, content: string) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
  };
}

export async function startFakeLlm(): Promise<FakeLlm> {
  const requests: Record<string, unknown>[] = [];
  const open = new Set<ServerResponse>();
  const state = { flaky: true, slowMs: 3000 };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      requests.push(body);
      const model = String(body['model'] ?? 'fake');
      const messages = (body['messages'] as Message[] | undefined) ?? [];
      const all = messages.map((m) => text(m.content)).join('\n');
      const format = body['response_format'] as { type?: string; json_schema?: { name?: string } } | undefined;
      if (format?.json_schema?.name === 'step_verdict') {
        if (all.includes('OBJ-UNKNOWN')) return send(res, 200, completion(model, 'I would rather not say.'));
        const verdict = all.includes('OBJ-FAIL') ? 'fail' : 'pass';
        return send(res, 200, completion(model, JSON.stringify({ verdict, explanation: `judged ${verdict}` })));
      }
      const last = text([...messages].reverse().find((m) => m.role === 'user')?.content);
      if (last.includes('BOOM') || (last.includes('FLAKY') && state.flaky)) {
        return send(res, 400, { error: { message: 'fake upstream refuses', type: 'invalid_request_error', code: null, param: null } });
      }
      const reply = completion(model, `Answer to: ${last}`);
      if (last.includes('SLOW')) {
        setTimeout(() => send(res, 200, reply), state.slowMs);
        return;
      }
      send(res, 200, reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get flaky() {
      return state.flaky;
    },
    set flaky(value: boolean) {
      state.flaky = value;
    },
    get slowMs() {
      return state.slowMs;
    },
    set slowMs(value: number) {
      state.slowMs = value;
    },
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
