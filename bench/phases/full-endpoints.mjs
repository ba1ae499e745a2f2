// @ts-check
// Full endpoints, the second part of the memory phase (--only=memory): every endpoint holds its
// 50 requests of the full stored size, against the bound the store may hold.
import autocannon from 'autocannon';
import { KIB, MIB } from '../common.mjs';
import { settledMemory } from '../proc.mjs';
import { startServer, startWatcher } from '../processes.mjs';

/**
 * Sends `perEndpoint` bodies to each endpoint at `port`, in turn.
 * @param {number} port
 * @param {string[]} paths
 * @param {string} body
 * @param {number} perEndpoint
 */
function fill(port, paths, body, perEndpoint) {
  let next = 0;
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: 20,
        amount: paths.length * perEndpoint,
        requests: [
          {
            method: 'POST',
            body,
            headers: { 'content-type': 'text/plain' },
            setupRequest: (/** @type {object} */ request) => ({ ...request, path: paths[next++ % paths.length] }),
          },
        ],
      },
      (/** @type {Error | null} */ error, /** @type {unknown} */ result) => (error ? reject(error) : resolve(result)),
    ),
  );
}

/** @param {import('../common.mjs').Config} config */
export async function fullEndpointsPhase(config) {
  const cap = 8 * KIB;
  const endpoints = config.quick ? 200 : 1000;
  const server = await startServer('hookwatch-gc', { MAX_BODY_BYTES: String(cap), REQUESTS_PER_ENDPOINT: '50' });
  const holders = await startWatcher(server, { endpoints });
  await fill(
    server.port,
    holders.urls.map((url) => new URL(url).pathname),
    'y'.repeat(cap),
    50,
  );
  const { rss } = await settledMemory(server);
  holders.stop();
  server.child.kill();
  // What the store may hold: every request, or the default MAX_STORED_BYTES when that is less.
  const bound = Math.min(endpoints * 50 * cap, 256 * MIB);
  return {
    fullEndpoints: {
      endpoints,
      requestsEach: 50,
      storedCapBytes: cap,
      boundMiB: bound / MIB,
      rssMiB: rss / MIB,
      rssOverBound: rss / bound,
    },
  };
}
