// The floor: a minimal pass-through proxy in a few lines of node:http piping. Whatever a Node gateway
// does, it cannot beat this on the same core; the gateway's targets are ratios against it.
//   node floor-proxy.js <upstream port> [<CA PEM file>]   with a CA file, the upstream is https
import { readFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { Agent as TlsAgent, request as tlsRequest } from 'node:https';

const target = Number(process.argv[2]);
const caFile = process.argv[3];
const agent = caFile ? new TlsAgent({ keepAlive: true, maxSockets: 256, ca: readFileSync(caFile) }) : new Agent({ keepAlive: true, maxSockets: 256 });
const send = caFile ? tlsRequest : request;
const server = createServer((req, res) => {
  const upstream = send({ host: '127.0.0.1', port: target, path: req.url, method: req.method, headers: req.headers, agent }, (reply) => {
    res.writeHead(reply.statusCode ?? 502, reply.headers);
    reply.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
