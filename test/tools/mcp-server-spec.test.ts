// Reading a Responses `{type: "mcp"}` tool (parseMcpTool) and the allowed_tools / require_approval rules.
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors';
import { DEFAULT_APPROVAL, isToolAllowed, needsApproval, parseMcpTool, type McpServerSpec } from '../../src/tools/mcp';

const base = { server_label: 'deepwiki', server_url: 'https://mcp.example.com/mcp' };

function rejects(config: Record<string, unknown>, param: string, message: RegExp, code = 'bad_request'): void {
  assert.throws(
    () => parseMcpTool(config, 'tools[2]'),
    (err: unknown) => {
      assert.ok(err instanceof GatewayError);
      assert.equal(err.status, 400);
      assert.equal(err.code, code);
      assert.equal(err.param, param);
      assert.match(err.message, message);
      return true;
    },
  );
}

describe('parseMcpTool', () => {
  it('reads a full tool, with or without its type', () => {
    const spec = parseMcpTool(
      {
        type: 'mcp',
        ...base,
        server_description: 'Docs of public repositories.',
        headers: { 'X-Api-Key': 'k-123' },
        allowed_tools: ['ask_question'],
        require_approval: { never: { tool_names: ['ask_question'] } },
      },
      'tools[0]',
    );
    assert.deepEqual(spec, {
      serverLabel: 'deepwiki',
      serverUrl: 'https://mcp.example.com/mcp',
      headers: { 'X-Api-Key': 'k-123' },
      allowedTools: { toolNames: ['ask_question'] },
      requireApproval: { never: { toolNames: ['ask_question'] } },
      serverDescription: 'Docs of public repositories.',
    });
    assert.deepEqual(parseMcpTool(base, 'tools[0]').serverLabel, 'deepwiki');
  });

  it('defaults: every tool allowed, approval always (as OpenAI), no headers', () => {
    const spec = parseMcpTool(base, 'tools[0]');
    assert.equal(spec.allowedTools, null);
    assert.equal(spec.requireApproval, 'always');
    assert.equal(DEFAULT_APPROVAL, 'always');
    assert.deepEqual(spec.headers, {});
  });

  it('reads allowed_tools as a filter object, read_only included', () => {
    assert.deepEqual(parseMcpTool({ ...base, allowed_tools: { tool_names: ['a'], read_only: true } }, 't').allowedTools, { toolNames: ['a'], readOnly: true });
    assert.deepEqual(parseMcpTool({ ...base, allowed_tools: { read_only: false } }, 't').allowedTools, { readOnly: false });
  });

  it('turns authorization into a bearer Authorization header', () => {
    assert.deepEqual(parseMcpTool({ ...base, authorization: 'tok' }, 't').headers, { Authorization: 'Bearer tok' });
    rejects({ ...base, authorization: 'tok', headers: { authorization: 'Bearer other' } }, 'tools[2].authorization', /together with an Authorization header/);
  });

  it('refuses a missing or empty server_label', () => {
    rejects({ server_url: base.server_url }, 'tools[2].server_label', /non-empty string/);
    rejects({ ...base, server_label: ' ' }, 'tools[2].server_label', /non-empty string/);
  });

  it('refuses a server_url that is missing, not a URL, not http(s), or carries credentials', () => {
    rejects({ server_label: 'x' }, 'tools[2].server_url', /URL of an MCP server/);
    rejects({ ...base, server_url: 'not a url' }, 'tools[2].server_url', /not a valid URL/);
    rejects({ ...base, server_url: 'ftp://example.com/' }, 'tools[2].server_url', /http or https URL, not ftp:/);
    rejects({ ...base, server_url: 'https://user:secret@example.com/' }, 'tools[2].server_url', /credentials/);
  });

  it('refuses connectors (no server_url to reach)', () => {
    rejects({ server_label: 'x', connector_id: 'connector_gmail' }, 'tools[2].connector_id', /connectors are not offered/, 'unsupported_parameter');
  });

  it('refuses bad headers without echoing their values', () => {
    rejects({ ...base, headers: ['x'] }, 'tools[2].headers', /object of header names/);
    rejects({ ...base, headers: { 'Bad Name': 'v' } }, 'tools[2].headers', /not a valid header name/);
    rejects({ ...base, headers: { 'X-Key': 7 } }, 'tools[2].headers.X-Key', /must be a string/);
    rejects({ ...base, headers: { 'X-Key': 'secret\r\nInjected: yes' } }, 'tools[2].headers.X-Key', /no line breaks/);
    rejects({ ...base, headers: { 'Mcp-Session-Id': 'abc' } }, 'tools[2].headers.Mcp-Session-Id', /set by the MCP transport/);
    rejects({ ...base, headers: { 'Content-Type': 'text/plain' } }, 'tools[2].headers.Content-Type', /set by the MCP transport/);
    rejects({ ...base, headers: { 'x-key': 'a', 'X-Key': 'b' } }, 'tools[2].headers.X-Key', /given twice/);
    try {
      parseMcpTool({ ...base, headers: { 'X-Key': 'hunter2\n' } }, 't');
      assert.fail('expected a 400');
    } catch (err) {
      assert.doesNotMatch((err as Error).message, /hunter2/);
    }
  });

  it('refuses malformed allowed_tools and require_approval, naming the field', () => {
    rejects({ ...base, allowed_tools: 'add' }, 'tools[2].allowed_tools', /array of tool names or a filter/);
    rejects({ ...base, allowed_tools: ['add', 3] }, 'tools[2].allowed_tools[1]', /tool name/);
    rejects({ ...base, allowed_tools: { tool_names: 'add' } }, 'tools[2].allowed_tools.tool_names', /array of tool names/);
    rejects({ ...base, allowed_tools: { read_only: 'yes' } }, 'tools[2].allowed_tools.read_only', /boolean/);
    rejects({ ...base, require_approval: 'sometimes' }, 'tools[2].require_approval', /"always", "never"/);
    rejects({ ...base, require_approval: { maybe: {} } }, 'tools[2].require_approval.maybe', /not a field of require_approval/);
    rejects({ ...base, require_approval: { never: { tool_names: [1] } } }, 'tools[2].require_approval.never.tool_names[0]', /tool name/);
  });
});

describe('MCP tool rules', () => {
  const spec = (patch: Partial<McpServerSpec>): McpServerSpec => ({ ...parseMcpTool(base, 't'), ...patch });
  const readOnly = { name: 'lookup', annotations: { readOnlyHint: true } };
  const writer = { name: 'write' };

  it('allowed_tools: by name, by read_only annotation, or every tool when absent', () => {
    assert.equal(isToolAllowed(spec({}), 'anything'), true);
    const byName = spec({ allowedTools: { toolNames: ['add'] } });
    assert.equal(isToolAllowed(byName, 'add'), true);
    assert.equal(isToolAllowed(byName, 'echo'), false);
    const readOnlyOnly = spec({ allowedTools: { readOnly: true } });
    assert.equal(isToolAllowed(readOnlyOnly, readOnly), true);
    assert.equal(isToolAllowed(readOnlyOnly, writer), false, 'no annotation counts as not read-only');
    assert.equal(isToolAllowed(readOnlyOnly, 'lookup'), false, 'a name alone cannot satisfy read_only');
  });

  it('require_approval: always, never, and filters where always wins and uncovered tools need approval', () => {
    assert.equal(needsApproval(spec({ requireApproval: 'always' }), 'add'), true);
    assert.equal(needsApproval(spec({ requireApproval: 'never' }), 'add'), false);
    const filters = spec({ requireApproval: { never: { toolNames: ['add', 'echo'] }, always: { toolNames: ['echo'] } } });
    assert.equal(needsApproval(filters, 'add'), false);
    assert.equal(needsApproval(filters, 'echo'), true, 'always wins when both cover a tool');
    assert.equal(needsApproval(filters, 'slow'), true, 'a tool neither covers needs approval');
    const readOnlyFree = spec({ requireApproval: { never: { readOnly: true } } });
    assert.equal(needsApproval(readOnlyFree, readOnly), false);
    assert.equal(needsApproval(readOnlyFree, writer), true);
  });
});
