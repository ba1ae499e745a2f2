// @ts-check
// A watcher process, separate from the load generator: opens sockets to Hookwatch (creating or
// joining an endpoint) or to the naive relay, and measures delivery latency from the send time
// the load generator put in each body (`"t":<epoch ms with µs>`), against its own clock.
import WebSocket from 'ws';

const now = () => performance.timeOrigin + performance.now();
// sockets: N sockets on one endpoint (fan-out). endpoints: N endpoints, one socket each (memory).
const { target, port, sockets: socketCount = 1, endpoints: endpointCount = 0 } = JSON.parse(process.argv[2]);
const latencies = [];
let received = 0;
let endpoint;

// Hookwatch v1 carries the body as a JSON string, so its quotes arrive escaped; v2 (a binary
// frame) and the relays carry it raw. A build from before v2 answers the offer with v1.
const RAW_MARKER = Buffer.from('"t":');
const ESCAPED_MARKER = Buffer.from('\\"t\\":');
let marker = RAW_MARKER;

/**
 * Finds the send time in the raw frame without decoding or parsing the whole message, so the
 * watcher's own cost stays small next to the server's.
 */
function record(data, measure) {
  received++;
  if (!measure) return;
  const at = data.indexOf(marker);
  if (at === -1) return;
  const t = Number.parseFloat(data.toString('latin1', at + marker.length, at + marker.length + 24));
  if (Number.isFinite(t)) latencies.push(now() - t);
}

/** Opens one socket: creates an endpoint, or joins `joining`. Resolves to the socket and its endpoint. */
async function open(index, joining) {
  const url = target === 'hookwatch' ? `ws://127.0.0.1:${port}/api/live` : `ws://127.0.0.1:${port}/ws`;
  const socket = new WebSocket(url, target === 'hookwatch' ? ['hookwatch.v2', 'hookwatch.v1'] : []);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  if (socket.protocol === 'hookwatch.v1') marker = ESCAPED_MARKER;
  if (target === 'hookwatch') {
    const welcome = new Promise((resolve) => socket.once('message', (data) => resolve(JSON.parse(data.toString()))));
    socket.send(
      JSON.stringify(joining ? { type: 'join', endpointId: joining.id, key: joining.key } : { type: 'create' }),
    );
    const message = await welcome;
    if (message.type !== 'welcome') throw new Error(`no welcome: ${JSON.stringify(message)}`);
    joining = message.endpoint;
  }
  // Only socket 0 measures latency; the others count, like a browser that renders later.
  socket.on('message', (data) => record(data, index === 0));
  return { socket, endpoint: joining };
}

const sockets = [];
const urls = [];
if (endpointCount > 0) {
  // Many endpoints, each watched by its own socket; 50 handshakes in flight at a time.
  for (let i = 0; i < endpointCount; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, endpointCount - i) }, async () => {
        const opened = await open(1, undefined);
        return { socket: opened.socket, url: opened.endpoint.url };
      }),
    );
    for (const { socket, url } of batch) {
      sockets.push(socket);
      urls.push(url);
    }
  }
} else {
  for (let i = 0; i < socketCount; i++) {
    const opened = await open(i, endpoint);
    endpoint = opened.endpoint;
    sockets.push(opened.socket);
  }
}
process.send({ ready: true, url: endpoint?.url, urls });
process.on('message', (message) => {
  if (message === 'reset') {
    latencies.length = 0;
    received = 0;
    process.send({ reset: true });
  } else if (message === 'report') {
    latencies.sort((a, b) => a - b);
    const pick = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    process.send({
      received,
      measured: latencies.length,
      p50: pick(0.5),
      p99: pick(0.99),
      max: latencies.at(-1) ?? NaN,
    });
  } else if (message === 'exit') {
    for (const socket of sockets) socket.terminate();
    process.exit(0);
  }
});
