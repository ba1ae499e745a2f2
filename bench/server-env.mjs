// What the bench and the profiler both give a server they start: a free port, and settings that
// let one machine's load through (every request and socket comes from 127.0.0.1).
import { createServer } from 'node:net';

/** A port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The environment of a measured server on `port`: rate limits off, per-address caps out of the way. */
export function benchServerEnv(port) {
  return {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_ENDPOINT: '0',
    RATE_LIMIT_PER_ADDRESS: '0',
    LIVE_CONNECTS_PER_ADDRESS: '0',
    MAX_ENDPOINTS: '20000',
    // The bench's load and watchers all come from 127.0.0.1: the per-address caps would refuse them.
    MAX_LIVE_SOCKETS_PER_ADDRESS: '100000',
    MAX_CONNECTIONS_PER_ADDRESS: '100000',
    MAX_CONNECTIONS: '100000',
  };
}
