// The benchmark's fake OpenAI-format upstream: as cheap as node:http allows, so the measurement is
// the proxy's overhead and not the upstream's. Non-streaming answers one fixed chat completion;
// streaming answers CHUNKS chat-completion chunks CHUNK_GAP_MS apart (like a model emitting tokens).
// POST …/responses answers as OpenAI's Responses API does (responses-wire.ts): a response object, or
// its event stream with CHUNKS text deltas CHUNK_GAP_MS apart, each response with an id of its own.
// With BENCH_TLS_CERT and BENCH_TLS_KEY (PEM file paths) it serves https instead of http.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { ResponsesReplies } from './responses-wire';

const CHUNKS = Number(process.env['BENCH_CHUNKS'] ?? 20);
const CHUNK_GAP_MS = Number(process.env['BENCH_CHUNK_GAP_MS'] ?? 2);
const TLS_CERT = process.env['BENCH_TLS_CERT'];
const TLS_KEY = process.env['BENCH_TLS_KEY'];

const completion = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'bench-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'The quick brown fox jumps over the lazy dog.', refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 },
  }),
);
const chunk = (delta: Record<string, unknown>, finish: string | null, usage?: unknown): Buffer =>
  Buffer.from(
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'bench-model', choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`,
  );
const first = chunk({ role: 'assistant', content: '' }, null);
const middle = chunk({ content: 'token ' }, null);
const last = Buffer.concat([chunk({}, 'stop', { prompt_tokens: 12, completion_tokens: CHUNKS, total_tokens: 12 + CHUNKS }), Buffer.from('data: [DONE]\n\n')]);

const responses = new ResponsesReplies(CHUNKS);

function answerResponses(stream: boolean, res: ServerResponse): void {
  const id = responses.newId();
  if (!stream) {
    const body = responses.body(id);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(responses.streamWrite(0, id));
  let sent = 1;
  const timer = setInterval(() => {
    if (sent >= CHUNKS) {
      clearInterval(timer);
      res.end(responses.streamWrite(CHUNKS, id));
      return;
    }
    res.write(responses.streamWrite(sent, id));
    sent++;
  }, CHUNK_GAP_MS);
  res.on('close', () => clearInterval(timer));
}

function answer(req: IncomingMessage, res: ServerResponse): void {
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on('end', () => {
    const body = Buffer.concat(parts).toString('utf8');
    if (req.url?.endsWith('/responses')) {
      answerResponses(body.includes('"stream":true'), res);
      return;
    }
    if (!body.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': completion.length });
      res.end(completion);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(first);
    let sent = 1;
    const timer = setInterval(() => {
      if (sent >= CHUNKS) {
        clearInterval(timer);
        res.end(last);
        return;
      }
      res.write(middle);
      sent++;
    }, CHUNK_GAP_MS);
    res.on('close', () => clearInterval(timer));
  });
}

const server = TLS_CERT && TLS_KEY ? createTlsServer({ cert: readFileSync(TLS_CERT), key: readFileSync(TLS_KEY) }, answer) : createServer(answer);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
