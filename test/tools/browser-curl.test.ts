// The curl export's command line: each argument survives a real POSIX shell unchanged, and the
// command says what curl needs to reproduce the request (the end-to-end replay is in browser-tools).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { curlCommand, isTextBody, shellQuote } from '../../src/tools/hosted/browser/curl';

const run = promisify(execFile);

describe('browser curl export', () => {
  it('quotes every argument so that sh passes it through unchanged', async () => {
    const nasty = [
      "it's",
      '"double" and \\backslash\\',
      '$HOME $(id) `id` ${PATH}',
      'semi; colon | pipe & amp > out < in',
      'new\nline\ttab',
      '!history * ? [glob] ~tilde #hash',
      "''",
      '',
      'plain-word_1.2/3:4@5%6+7=8,9',
    ];
    for (const value of nasty) {
      const { stdout } = await run('sh', ['-c', `printf '%s' ${shellQuote(value)}`]);
      assert.equal(stdout, value, `round trip of ${JSON.stringify(value)}`);
    }
    assert.equal(shellQuote('plain-word_1.2/3:4@5%6+7=8,9'), 'plain-word_1.2/3:4@5%6+7=8,9', 'plain words stay bare');
    assert.equal(shellQuote(''), "''");
  });

  it('writes -X only when curl would not infer the method', () => {
    const base = { url: 'https://example.com/', headers: {} };
    assert.equal(curlCommand({ ...base, method: 'GET', body: null }), 'curl https://example.com/');
    assert.equal(curlCommand({ ...base, method: 'POST', body: { text: 'a=1' } }), 'curl https://example.com/ --data-raw a=1');
    assert.equal(curlCommand({ ...base, method: 'POST', body: null }), 'curl -X POST https://example.com/');
    assert.equal(curlCommand({ ...base, method: 'delete', body: null }), 'curl -X DELETE https://example.com/');
    assert.equal(
      curlCommand({ ...base, method: 'PUT', body: { file: 'browser/request-3.body' } }),
      'curl -X PUT https://example.com/ --data-binary @browser/request-3.body',
    );
  });

  it('sends the headers the browser sent, leaving to curl what it writes itself', () => {
    const command = curlCommand({
      method: 'GET',
      url: 'https://example.com/a?x=[1]&y={2}',
      headers: {
        ':authority': 'example.com',
        host: 'example.com',
        'content-length': '0',
        connection: 'keep-alive',
        'accept-encoding': 'gzip, deflate, br',
        cookie: 'a=1; b=2',
        'x-empty': '',
        'x-twice': 'one\ntwo',
      },
      body: null,
    });
    assert.equal(
      command,
      "curl --globoff 'https://example.com/a?x=[1]&y={2}' -H 'cookie: a=1; b=2' -H 'x-empty;' -H 'x-twice: one' -H 'x-twice: two' --compressed",
    );
  });

  it('a body is text when it is UTF-8 without NUL', () => {
    assert.equal(isTextBody(Buffer.from('{"name":"Zoë"}')), true);
    assert.equal(isTextBody(Buffer.from([0x61, 0x00, 0x62])), false);
    assert.equal(isTextBody(Buffer.from([0xff, 0xfe, 0x41])), false);
  });
});
