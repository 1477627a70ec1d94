// The MCP client (McpClients) against real MCP servers made with the official SDK on 127.0.0.1
// (test/fixtures/mcp/mcp-servers.ts): listing and calling tools, the server's error results, timeouts
// and cancellation, a server that dies and comes back, allowed_tools, the tools/list cache, the legacy
// SSE fallback, the SSRF guard, size bounds, and headers that reach the server but never a log line.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import winston from 'winston';
import { McpClients, parseMcpTool, type McpServerSpec } from '../../src/tools/mcp';
import { ToolFailure } from '../../src/tools/types';
import { createWebAccess, type WebAccess } from '../../src/tools/web-access';
import { startMcpServer, type McpServerKind, type RunningMcpServer } from '../fixtures/mcp/mcp-servers';
import { testConfig } from '../helpers/config';
import { waitFor } from '../helpers/wait';

const SECRET = 'sk-mcp-secret-7f3a9c';

interface Harness {
  mcp: McpClients;
  webAccess: WebAccess;
  logs: string[];
}

const open: Array<{ close(): Promise<void> }> = [];

function harness(options: { mcp?: Record<string, unknown>; maxOutputBytes?: number; allowHosts?: string[] } = {}): Harness {
  const config = testConfig({
    tools: { allowHosts: options.allowHosts ?? ['127.0.0.1'], maxOutputBytes: options.maxOutputBytes ?? 65536, mcp: { callTimeoutMs: 5000, ...options.mcp } },
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = winston.createLogger({ level: 'debug', format: winston.format.json(), transports: [new winston.transports.Stream({ stream: sink })] });
  const webAccess = createWebAccess(config.tools.allowHosts);
  const mcp = new McpClients({ webAccess, logger, config });
  open.push(mcp, webAccess);
  return { mcp, webAccess, logs };
}

async function server(kind: McpServerKind = 'streamable-http', port?: number): Promise<RunningMcpServer> {
  const running = await startMcpServer(kind, port);
  open.push(running);
  return running;
}

function spec(running: { url: string }, patch: Record<string, unknown> = {}): McpServerSpec {
  return parseMcpTool({ type: 'mcp', server_label: 'test', server_url: running.url, require_approval: 'never', ...patch }, 'tools[0]');
}

const signal = (): AbortSignal => new AbortController().signal;

async function failure(work: Promise<unknown>, message: RegExp): Promise<ToolFailure> {
  try {
    await work;
  } catch (err) {
    assert.ok(err instanceof ToolFailure, `expected a ToolFailure, got ${String(err)}`);
    assert.match(err.message, message);
    return err;
  }
  assert.fail('expected the MCP request to fail');
}

const count = (list: readonly string[], item: string): number => list.filter((entry) => entry === item).length;

describe('McpClients', function () {
  this.timeout(30_000);

  afterEach(async () => {
    await Promise.all(open.splice(0).map((item) => item.close().catch(() => undefined)));
  });

  describe('over Streamable HTTP', () => {
    it('lists the tools with their descriptions, schemas and annotations', async () => {
      const running = await server();
      const { mcp } = harness();
      const tools = await mcp.listTools(spec(running), 'conv-1', signal());
      assert.deepEqual(
        tools.map((tool) => tool.name),
        ['add', 'echo', 'fail', 'slow', 'picture', 'big', 'lookup'],
      );
      const add = tools.find((tool) => tool.name === 'add');
      assert.equal(add?.description, 'Adds two numbers.');
      assert.deepEqual((add?.inputSchema as { required?: string[] }).required, ['a', 'b']);
      assert.equal(add?.annotations, undefined);
      assert.deepEqual(tools.find((tool) => tool.name === 'lookup')?.annotations, { readOnlyHint: true });
    });

    it('calls tools with arguments', async () => {
      const running = await server();
      const { mcp } = harness();
      assert.deepEqual(await mcp.callTool(spec(running), 'conv-1', 'add', { a: 2, b: 40 }, signal()), { output: '42', isError: false });
      assert.deepEqual(await mcp.callTool(spec(running), 'conv-1', 'echo', { text: 'héllo' }, signal()), { output: 'héllo', isError: false });
    });

    it('returns the server’s error result as isError with its text', async () => {
      const running = await server();
      const { mcp } = harness();
      assert.deepEqual(await mcp.callTool(spec(running), 'conv-1', 'fail', {}, signal()), { output: 'the widget is broken', isError: true });
    });

    it('turns arguments the server rejects into a result the model sees, not a thrown SDK error', async () => {
      const running = await server();
      const { mcp } = harness();
      // The SDK's server answers invalid arguments with an isError result naming the problem.
      const result = await mcp.callTool(spec(running), 'conv-1', 'add', { a: 'two' }, signal());
      assert.equal(result.isError, true);
      assert.match(result.output, /Input validation error|Invalid arguments/);
    });

    it('describes non-text blocks in a line each', async () => {
      const running = await server();
      const { mcp } = harness();
      const { output } = await mcp.callTool(spec(running), 'conv-1', 'picture', {}, signal());
      assert.equal(output, 'a red dot:\n[image: image/png, 16 bytes]\n[resource link: dot.png <file:///dot.png>]');
    });

    it('cuts output at tools.maxOutputBytes, saying so', async () => {
      const running = await server();
      const { mcp } = harness({ maxOutputBytes: 1000 });
      const { output } = await mcp.callTool(spec(running), 'conv-1', 'big', { bytes: 5000 }, signal());
      assert.equal(output, `${'x'.repeat(1000)}\n[… output cut: 4000 more bytes]`);
    });

    it('fails a call past tools.mcp.callTimeoutMs, cancels it on the server, and keeps the session', async () => {
      const running = await server();
      const { mcp } = harness({ mcp: { callTimeoutMs: 300 } });
      const started = Date.now();
      await failure(mcp.callTool(spec(running), 'conv-1', 'slow', { ms: 10_000 }, signal()), /^MCP server test did not answer within 300 ms\.$/);
      assert.ok(Date.now() - started < 5000, 'the call ends at its timeout');
      await waitFor(() => running.methods.includes('notifications/cancelled'), { what: 'the cancellation to reach the server' });
      assert.deepEqual(await mcp.callTool(spec(running), 'conv-1', 'add', { a: 1, b: 1 }, signal()), { output: '2', isError: false });
      assert.equal(count(running.methods, 'initialize'), 1, 'a timeout does not end the session');
    });

    it('stops at once when the caller’s signal aborts', async () => {
      const running = await server();
      const { mcp } = harness();
      const controller = new AbortController();
      const call = mcp.callTool(spec(running), 'conv-1', 'slow', { ms: 10_000 }, controller.signal);
      await waitFor(() => running.methods.includes('tools/call'), { what: 'the call to reach the server' });
      controller.abort();
      await failure(call, /^The call was cancelled\.$/);
      await waitFor(() => running.methods.includes('notifications/cancelled'), { what: 'the cancellation to reach the server' });
    });

    it('fails clearly while the server is down, and reconnects once it is back', async () => {
      const first = await server();
      const { mcp } = harness();
      const target = spec(first);
      assert.equal((await mcp.callTool(target, 'conv-1', 'add', { a: 1, b: 2 }, signal())).output, '3');
      await first.close();
      // The first request may meet the socket the server just closed; the next finds nobody listening.
      await failure(
        mcp.callTool(target, 'conv-1', 'add', { a: 1, b: 2 }, signal()),
        /^MCP server test is unreachable: connection (refused|closed by the server)\.$/,
      );
      await failure(mcp.callTool(target, 'conv-1', 'add', { a: 1, b: 2 }, signal()), /^MCP server test is unreachable: connection refused\.$/);
      const second = await server('streamable-http', first.port);
      assert.equal((await mcp.callTool(target, 'conv-1', 'add', { a: 3, b: 4 }, signal())).output, '7');
      assert.equal(count(second.methods, 'initialize'), 1, 'a new session was opened');
    });

    it('opens a new session and sends the request again when the server forgot the session (HTTP 404)', async () => {
      const running = await server();
      const { mcp } = harness();
      const target = spec(running);
      assert.equal((await mcp.callTool(target, 'conv-1', 'add', { a: 1, b: 2 }, signal())).output, '3');
      running.forgetSessions();
      assert.equal((await mcp.callTool(target, 'conv-1', 'add', { a: 5, b: 5 }, signal())).output, '10');
      assert.equal(count(running.methods, 'tools/call'), 3, 'the second call met the forgotten session, then ran on a new one');
      assert.equal(count(running.methods, 'initialize'), 2);
    });

    it('fails a server that does not answer the handshake within connectTimeoutMs', async () => {
      const silent: Server = createServer(() => undefined); // accepts, never answers
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      open.push({ close: () => new Promise<void>((resolve) => (silent.closeAllConnections(), silent.close(() => resolve()))) });
      const { mcp } = harness({ mcp: { connectTimeoutMs: 300 } });
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;
      await failure(mcp.listTools(spec({ url }), 'conv-1', signal()), /^MCP server test did not answer within 300 ms\.$/);
    });

    it('reports refused credentials without falling back to the legacy transport', async () => {
      const seen: string[] = [];
      const guarded: Server = createServer((req, res) => {
        seen.push(`${req.method} ${req.url}`);
        res.writeHead(401, { 'content-type': 'text/plain' }).end('no');
      });
      await new Promise<void>((resolve) => guarded.listen(0, '127.0.0.1', resolve));
      open.push({ close: () => new Promise<void>((resolve) => guarded.close(() => resolve())) });
      const { mcp } = harness();
      const url = `http://127.0.0.1:${(guarded.address() as AddressInfo).port}/mcp`;
      await failure(mcp.listTools(spec({ url }), 'conv-1', signal()), /refused the request \(HTTP 401\): check the credentials/);
      assert.deepEqual(seen, ['POST /mcp']);
    });

    it('fails a reply larger than tools.mcp.maxResponseBytes at once, and the next call opens a new session', async () => {
      const running = await server();
      const { mcp } = harness({ mcp: { maxResponseBytes: 4096, callTimeoutMs: 20_000 } });
      const started = Date.now();
      await failure(mcp.callTool(spec(running), 'conv-1', 'big', { bytes: 50_000 }, signal()), /^MCP server test sent a reply larger than 4096 bytes\.$/);
      assert.ok(Date.now() - started < 10_000, 'not left waiting for the call timeout');
      assert.equal((await mcp.callTool(spec(running), 'conv-1', 'add', { a: 1, b: 1 }, signal())).output, '2');
      assert.equal(count(running.methods, 'initialize'), 2);
    });
  });

  describe('allowed_tools', () => {
    it('lists only the allowed tools, and refuses the others without calling the server', async () => {
      const running = await server();
      const { mcp } = harness();
      const target = spec(running, { allowed_tools: ['add', 'lookup'] });
      assert.deepEqual(
        (await mcp.listTools(target, 'conv-1', signal())).map((tool) => tool.name),
        ['add', 'lookup'],
      );
      await failure(
        mcp.callTool(target, 'conv-1', 'echo', { text: 'x' }, signal()),
        /^echo is not among the allowed_tools of MCP server test; it was not called\.$/,
      );
      assert.equal(count(running.methods, 'tools/call'), 0);
    });

    it('filters by the read_only annotation', async () => {
      const running = await server();
      const { mcp } = harness();
      const target = spec(running, { allowed_tools: { read_only: true } });
      assert.deepEqual(
        (await mcp.listTools(target, 'conv-1', signal())).map((tool) => tool.name),
        ['lookup'],
      );
      assert.equal((await mcp.callTool(target, 'conv-1', 'lookup', {}, signal())).output, 'found');
      await failure(mcp.callTool(target, 'conv-1', 'add', { a: 1, b: 1 }, signal()), /not among the allowed_tools/);
    });

    it('refuses a tool the server does not have, naming those it has', async () => {
      const running = await server();
      const { mcp } = harness();
      await failure(
        mcp.callTool(spec(running, { allowed_tools: ['add', 'nope'] }), 'conv-1', 'nope', {}, signal()),
        /^MCP server test has no tool named nope; its tools: add\.$/,
      );
    });
  });

  describe('the tools/list cache', () => {
    it('lists once per conversation, server and headers, concurrent callers included', async () => {
      const running = await server();
      const { mcp } = harness();
      await Promise.all([mcp.listTools(spec(running), 'conv-1', signal()), mcp.listTools(spec(running), 'conv-1', signal())]);
      await mcp.listTools(spec(running, { allowed_tools: ['add'] }), 'conv-1', signal());
      await mcp.callTool(spec(running), 'conv-1', 'add', { a: 1, b: 1 }, signal());
      assert.equal(count(running.methods, 'tools/list'), 1);
      assert.equal(count(running.methods, 'initialize'), 1);
      await mcp.listTools(spec(running), 'conv-2', signal());
      assert.equal(count(running.methods, 'tools/list'), 2, 'another conversation lists for itself');
      await mcp.listTools(spec(running, { headers: { 'X-Api-Key': 'other' } }), 'conv-1', signal());
      assert.equal(count(running.methods, 'tools/list'), 3, 'other headers are another session');
    });

    it('reads the list again after the server says it changed', async () => {
      const running = await server();
      const { mcp } = harness();
      assert.equal((await mcp.listTools(spec(running), 'conv-1', signal())).length, 7);
      running.addTool('later');
      await waitFor(async () => (await mcp.listTools(spec(running), 'conv-1', signal())).some((tool) => tool.name === 'later'), {
        what: 'the new tool to be listed',
      });
      assert.equal((await mcp.callTool(spec(running), 'conv-1', 'later', {}, signal())).output, 'later');
    });

    it('forget() ends the conversation’s sessions (DELETE) and its list', async () => {
      const running = await server();
      const { mcp } = harness();
      await mcp.listTools(spec(running), 'conv-1', signal());
      await mcp.forget('conv-1');
      assert.equal(count(running.requests, 'DELETE /mcp'), 1);
      await mcp.listTools(spec(running), 'conv-1', signal());
      assert.equal(count(running.methods, 'tools/list'), 2);
    });

    it('a call caught by forget() fails instead of opening a session nobody would close', async () => {
      const running = await server();
      const { mcp } = harness();
      await mcp.listTools(spec(running), 'conv-1', signal());
      const call = failure(mcp.callTool(spec(running), 'conv-1', 'add', { a: 1, b: 1 }, signal()), /^The session with MCP server test was closed\.$/);
      await mcp.forget('conv-1');
      await call;
      assert.equal(count(running.methods, 'initialize'), 1);
    });

    it('after close(), refuses new work without contacting the server', async () => {
      const running = await server();
      const { mcp } = harness();
      await mcp.close();
      await failure(mcp.listTools(spec(running), 'conv-1', signal()), /shutting down/);
      assert.deepEqual(running.requests, []);
    });

    it('closes a session idle past tools.mcp.idleTimeoutMs', async () => {
      const running = await server();
      const { mcp } = harness({ mcp: { idleTimeoutMs: 1000 } });
      await mcp.listTools(spec(running), 'conv-1', signal());
      await waitFor(() => running.requests.includes('DELETE /mcp'), { what: 'the idle session to be ended' });
    });

    it('close() ends every session', async () => {
      const running = await server();
      const { mcp } = harness();
      await mcp.listTools(spec(running), 'conv-1', signal());
      await mcp.listTools(spec(running), 'conv-2', signal());
      await mcp.close();
      assert.equal(count(running.requests, 'DELETE /mcp'), 2);
    });
  });

  describe('the legacy HTTP+SSE transport', () => {
    it('falls back to it when the server has no Streamable HTTP endpoint', async () => {
      const running = await server('sse');
      const { mcp, logs } = harness();
      const tools = await mcp.listTools(spec(running), 'conv-1', signal());
      assert.ok(tools.some((tool) => tool.name === 'add'));
      assert.deepEqual(await mcp.callTool(spec(running), 'conv-1', 'add', { a: 20, b: 22 }, signal()), { output: '42', isError: false });
      assert.deepEqual(await mcp.callTool(spec(running), 'conv-1', 'fail', {}, signal()), { output: 'the widget is broken', isError: true });
      assert.deepEqual(running.requests.slice(0, 2), ['POST /sse', 'GET /sse'], 'Streamable HTTP tried first, then the SSE stream');
      assert.ok(logs.some((line) => line.includes('"transport":"sse"')));
    });

    it('reconnects after the legacy server died and came back', async () => {
      const first = await server('sse');
      const { mcp } = harness();
      assert.equal((await mcp.callTool(spec(first), 'conv-1', 'add', { a: 1, b: 2 }, signal())).output, '3');
      await first.close();
      await failure(mcp.callTool(spec(first), 'conv-1', 'add', { a: 1, b: 2 }, signal()), /MCP server test/);
      const second = await server('sse', first.port);
      assert.equal((await mcp.callTool(spec(first), 'conv-1', 'add', { a: 2, b: 2 }, signal())).output, '4');
      assert.ok(second.methods.includes('initialize'));
    });
  });

  describe('the SSRF guard', () => {
    it('refuses a private server URL that is not allow-listed, before any request', async () => {
      const running = await server();
      const { mcp } = harness({ allowHosts: [] });
      await failure(
        mcp.listTools(spec(running), 'conv-1', signal()),
        /^MCP server test is not reachable from this gateway: its address is private or special-purpose\.$/,
      );
      await failure(mcp.callTool(spec(running), 'conv-1', 'add', { a: 1, b: 1 }, signal()), /private or special-purpose/);
      const byName = spec({ url: `http://localhost:${running.port}/mcp` });
      await failure(
        mcp.listTools(byName, 'conv-1', signal()),
        /^MCP server test is not reachable from this gateway: its address is private or special-purpose\.$/,
      );
      assert.deepEqual(running.requests, [], 'the server saw no request');
    });

    it('lets an allow-listed host:port through', async () => {
      const running = await server();
      const { mcp } = harness({ allowHosts: [`127.0.0.1:${running.port}`] });
      assert.equal((await mcp.listTools(spec(running), 'conv-1', signal())).length, 7);
    });
  });

  describe('headers', () => {
    it('are sent with every request to the server, and never logged', async () => {
      const running = await server();
      const { mcp, logs } = harness({ mcp: { callTimeoutMs: 300 } });
      const target = spec(running, { headers: { 'X-Api-Key': SECRET }, authorization: `${SECRET}-token` });
      await mcp.callTool(target, 'conv-1', 'add', { a: 1, b: 1 }, signal());
      await failure(mcp.callTool(target, 'conv-1', 'slow', { ms: 5000 }, signal()), /did not answer/);
      await failure(mcp.callTool(target, 'conv-1', 'echo2', {}, signal()), /no tool named echo2/);
      await mcp.forget('conv-1');
      assert.ok(running.headers.length > 0);
      for (const headers of running.headers) {
        assert.equal(headers['x-api-key'], SECRET);
        assert.equal(headers['authorization'], `Bearer ${SECRET}-token`);
      }
      await running.close();
      await failure(mcp.callTool(target, 'conv-1', 'add', { a: 1, b: 1 }, signal()), /unreachable/);
      assert.ok(logs.length > 0, 'the client logged');
      for (const line of logs) assert.ok(!line.includes(SECRET), `a log line carries the header: ${line}`);
    });
  });
});
