// @ts-check
// Baseline 3, the leanest relay: the least a Fastify server can do to forward each POST body to
// WebSocket subscribers. Raw ws (no plugin, no route for the upgrade) on the HTTP server's
// 'upgrade' event, a string body parser, an empty 200, and one ws.send(body) per subscriber.
// No capture, no storage, no protocol, no headers of its own. The relay baseline of the bench.
import Fastify from 'fastify';
import { WebSocketServer } from 'ws';

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
const wss = new WebSocketServer({ noServer: true });
const subscribers = new Set();
app.server.on('upgrade', (request, socket, head) => {
  wss.handleUpgrade(request, socket, head, (ws) => {
    subscribers.add(ws);
    ws.on('close', () => subscribers.delete(ws));
  });
});
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
app.post('/*', (request, reply) => {
  const body = request.body;
  for (const ws of subscribers) ws.send(body);
  reply.code(200).send();
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.send?.({ ready: true });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
