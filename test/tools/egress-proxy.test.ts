// The egress proxy dispatcher's own guards: a proxy URL it cannot serve is refused without repeating
// it, and a message that carries the proxy URL or its credentials is blanked before anyone sees it.
import assert from 'node:assert/strict';
import { Agent, ProxyAgent } from 'undici';
import { EgressProxyError, proxyDispatcher, withoutProxySecrets } from '../../src/tools/egress-proxy';

describe('egress proxy', () => {
  it('refuses a scheme it does not serve, without repeating the URL', () => {
    assert.throws(
      () => proxyDispatcher('ftp://agent:hunter2-pass@proxy.internal:21'),
      (err: unknown) => {
        assert.ok(err instanceof EgressProxyError);
        assert.equal(err.message, 'The egress proxy URL uses the scheme ftp:, not one of http, https, socks5, socks5h.');
        return true;
      },
    );
  });

  it('serves http and https proxies with ProxyAgent, socks5 with a SOCKS connector', async () => {
    for (const url of ['http://proxy.internal:3128', 'https://u:p@proxy.internal']) {
      const dispatcher = proxyDispatcher(url);
      assert.ok(dispatcher instanceof ProxyAgent, url);
      await dispatcher.close();
    }
    for (const url of ['socks5://u:p@proxy.internal', 'socks5h://[::1]:1080']) {
      const dispatcher = proxyDispatcher(url);
      assert.ok(dispatcher instanceof Agent && !(dispatcher instanceof ProxyAgent), url);
      await dispatcher.close();
    }
  });

  it('blanks the URL, its password and user name in a message', () => {
    const url = 'http://agent-user:s3cr%40t-pass@proxy.internal:3128';
    const message = withoutProxySecrets(`connect to ${url} failed; user agent-user, password s3cr@t-pass, also s3cr%40t-pass`, url);
    assert.equal(message, 'connect to [egress proxy] failed; user ***, password ***, also ***');
    assert.equal(withoutProxySecrets('nothing to hide', null), 'nothing to hide');
  });
});
