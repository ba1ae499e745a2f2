// @ts-check
// Baseline 2, the relay ceiling: Fastify + ws forwarding each POST body as-is to the connected
// sockets. No capture, no storage, no protocol.
import websocket from '@fastify/websocket';
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
await app.register(websocket);
const sockets = new Set();
app.get('/ws', { websocket: true }, (socket) => {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
});
// Raw bytes for every content type, as Hookwatch reads them.
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.post('/*', async (request) => {
  for (const socket of sockets) socket.send(request.body, { binary: false });
  return 'ok';
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.send?.({ ready: true });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
