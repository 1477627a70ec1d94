// svc_shell end to end through POST /v1/responses: a fake model calls the shell, then reads back what
// the command wrote with svc_file_read (one workspace per conversation), and sees the exit code,
// stdout, stderr and the limit that killed a command, each call an svc_call item.
import assert from 'node:assert/strict';
import net from 'node:net';
import { jsonReply } from '../responses/http-helpers';
import { offered, organizationsWithTools, toolMessages, useToolGateway, type Json } from './tool-gateway';

describe('svc_shell through POST /v1/responses', function () {
  this.timeout(60_000);
  // Stands in for an egress proxy on the host: the test sees whether the sandbox reached it.
  let proxy: net.Server;
  let proxyPort: number;
  let proxyConnections = 0;
  const bed = useToolGateway(async () => {
    proxy = net.createServer((socket) => {
      proxyConnections++;
      // The sandbox's probe may close first: a reset on this socket is the probe leaving, not a test failure.
      socket.on('error', () => undefined);
      socket.end('proxy here\n');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyPort = (proxy.address() as net.AddressInfo).port;
    return {
      tools: { maxRounds: 4, shell: { wallTimeMs: 5000, maxOutputBytes: 4096 } },
      config: {
        organizations: organizationsWithTools({ egressProfiles: { lab: { url: `http://agent:s3cret-pass@127.0.0.1:${proxyPort}` } } }),
        plugins: { auth: { enabled: true } },
      },
      teardown: () => new Promise((resolve) => proxy?.close(resolve)),
    };
  });

  const create = (body: Json): Promise<Response> => bed.respond(body);

  it('runs the command, shows the model its exit code, stdout and stderr, and shares the workspace with svc_file_read', async () => {
    bed.upstream.script((body) => {
      const tools = toolMessages(body);
      if (tools.length === 0) {
        const command = 'mkdir -p out && echo "42 lines" > out/count.txt && cat out/count.txt && echo careful >&2 && exit 4';
        return { toolCalls: [{ id: 'call_sh', name: 'svc_shell', arguments: JSON.stringify({ command }) }] };
      }
      if (tools.length === 1) return { toolCalls: [{ id: 'call_rd', name: 'svc_file_read', arguments: JSON.stringify({ path: 'out/count.txt' }) }] };
      return { reply: 'counted' };
    });
    const reply = await jsonReply(await create({ input: 'count', tools: [{ type: 'svc_tools' }] }));
    assert.equal(reply.status, 200, reply.text);
    assert.ok(offered(bed.upstream.calls[0]!.body).includes('svc_shell'), 'svc_tools offers the shell: its start-up check passed');
    const output = reply.body['output'] as Json[];
    assert.deepEqual(
      output.map((item) => [item['type'], item['name'] ?? null, item['status']]),
      [
        ['svc_call', 'svc_shell', 'completed'],
        ['svc_call', 'svc_file_read', 'completed'],
        ['message', null, 'completed'],
      ],
    );
    const shown = 'exit_code: 4\n--- stdout ---\n42 lines\n--- stderr ---\ncareful';
    assert.equal(output[0]!['output'], shown);
    assert.equal(output[1]!['output'], '42 lines\n');
    assert.equal(String(toolMessages(bed.upstream.calls[1]!.body)[0]!.content), shown, 'the model sees the same text');
  });

  it("has no network until svc_vpn_connect, then the profile's proxy (its password kept from the model)", async () => {
    bed.upstream.script((body) => {
      const tools = toolMessages(body);
      const command = `echo "proxy=$HTTP_PROXY"; bash -c 'exec 3<>/dev/tcp/127.0.0.1/${proxyPort}' 2>/dev/null && echo reached || echo unreachable`;
      if (tools.length === 0) return { toolCalls: [{ id: 'off', name: 'svc_shell', arguments: JSON.stringify({ command }) }] };
      if (tools.length === 1) return { toolCalls: [{ id: 'vpn', name: 'svc_vpn_connect', arguments: JSON.stringify({ profile: 'lab' }) }] };
      if (tools.length === 2) return { toolCalls: [{ id: 'on', name: 'svc_shell', arguments: JSON.stringify({ command }) }] };
      return { reply: 'done' };
    });
    const reply = await jsonReply(await create({ input: 'go online', tools: [{ type: 'svc_shell' }, { type: 'svc_vpn_connect' }] }));
    assert.equal(reply.status, 200, reply.text);
    const output = reply.body['output'] as Json[];
    assert.deepEqual(
      output.map((item) => [item['name'] ?? item['type'], item['status']]),
      [
        ['svc_shell', 'completed'],
        ['svc_vpn_connect', 'completed'],
        ['svc_shell', 'completed'],
        ['message', 'completed'],
      ],
    );
    assert.match(String(output[0]!['output']), /--- stdout ---\nproxy=\nunreachable\n/);
    assert.match(String(output[2]!['output']), /--- stdout ---\nproxy=\[egress proxy\]\nreached\n/);
    assert.equal(proxyConnections, 1);
    assert.ok(!reply.text.includes('s3cret-pass'), 'the proxy password is in no output');
    assert.ok(!bed.upstream.calls.some((call) => JSON.stringify(call.body).includes('s3cret-pass')), 'nor sent to the model');
  });

  it('a command killed by a limit is a completed call saying which limit; the response completes', async () => {
    bed.upstream.script((body) =>
      toolMessages(body).length === 0
        ? { toolCalls: [{ id: 'call_slow', name: 'svc_shell', arguments: JSON.stringify({ command: 'echo started; sleep 30', timeout_ms: 300 }) }] }
        : { reply: 'it was too slow' },
    );
    const started = Date.now();
    const reply = await jsonReply(await create({ input: 'wait', tools: [{ type: 'svc_shell' }] }));
    assert.equal(reply.status, 200, reply.text);
    assert.ok(Date.now() - started < 10_000);
    assert.equal(reply.body['status'], 'completed');
    const call = (reply.body['output'] as Json[])[0]!;
    assert.equal(call['status'], 'completed');
    assert.match(String(call['output']), /^exit_code: none \(killed\)\nkilled: wall_time: .*300 ms.*\n--- stdout ---\nstarted\n/);
  });
});
