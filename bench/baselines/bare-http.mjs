// @ts-check
// Baseline 1, the HTTP ceiling: Fastify answering 200 once it has read the body. No capture.
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
// Raw bytes for every content type, as Hookwatch reads them.
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.post('/*', async () => 'ok');
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.send?.({ ready: true });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
