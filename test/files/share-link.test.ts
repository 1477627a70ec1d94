// Where share links point: server.publicUrl, else the address the request came in on (forwarded
// headers only behind a trusted proxy), else this server's host and port.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { publicBaseUrl, requestBaseUrl } from '../../src/files/share-link';
import type { ServerConfig } from '../../src/config/types';

const server = (patch: Partial<ServerConfig> = {}): ServerConfig => ({
  host: '0.0.0.0',
  port: 8080,
  bodyLimitBytes: 1024,
  shutdownGraceMs: 0,
  trustProxy: false,
  ...patch,
});

function req(headers: Record<string, string>, encrypted = false): IncomingMessage {
  return { headers, socket: { encrypted } as unknown as Socket } as IncomingMessage;
}

describe('share link addresses', () => {
  it('server.publicUrl first, then the request, then host:port (a wildcard host as loopback)', () => {
    assert.equal(publicBaseUrl(server({ publicUrl: 'https://gw.example.com/' }), 'http://10.0.0.5:8080'), 'https://gw.example.com');
    assert.equal(publicBaseUrl(server(), 'http://10.0.0.5:8080'), 'http://10.0.0.5:8080');
    assert.equal(publicBaseUrl(server()), 'http://127.0.0.1:8080');
    assert.equal(publicBaseUrl(server({ host: '::' })), 'http://[::1]:8080');
    assert.equal(publicBaseUrl(server({ host: 'fd00::1' })), 'http://[fd00::1]:8080');
    assert.equal(publicBaseUrl(server({ host: 'gw.internal' })), 'http://gw.internal:8080');
  });

  it('reads the Host header and the connection, and X-Forwarded-* only behind a trusted proxy', () => {
    assert.equal(requestBaseUrl(req({ host: 'gw.local:8080' }), false), 'http://gw.local:8080');
    assert.equal(requestBaseUrl(req({ host: 'gw.local' }, true), false), 'https://gw.local');
    const forwarded = req({ host: '10.0.0.5:8080', 'x-forwarded-host': 'gw.example.com, proxy.internal', 'x-forwarded-proto': 'https' });
    assert.equal(requestBaseUrl(forwarded, false), 'http://10.0.0.5:8080', 'untrusted forwarded headers are ignored');
    assert.equal(requestBaseUrl(forwarded, true), 'https://gw.example.com');
    assert.equal(requestBaseUrl(req({ host: '[::1]:8080' }), false), 'http://[::1]:8080');
    assert.equal(requestBaseUrl(req({ host: 'evil.com/path?x=' }), false), null, 'a Host that is not a host is not put into a link');
    assert.equal(requestBaseUrl(req({}), false), null);
  });
});
