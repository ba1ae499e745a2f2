// @ts-check
// Stored bodies and a full budget, the last part of the memory phase (--only=memory): the bytes of
// RSS each stored 1 MiB body costs, per encoding case (after a full GC, beside the stored bytes as
// the store counts them), and the RSS of a process whose whole stored-bytes budget is full of the
// worst case, sampled while it fills.
import { MIB } from '../common.mjs';
import { rssBytes, sampleRss, settledMemory } from '../proc.mjs';
import { startServer, startWatcher } from '../processes.mjs';

/**
 * The hostile 1 MiB bodies of issue #12, each with the content type that made it cost most.
 * @type {[label: string, makeBody: () => Buffer<ArrayBuffer>, contentType: string][]}
 */
const ENCODING_CASES = [
  ['ASCII text', () => Buffer.alloc(MIB, 0x61), 'text/plain'],
  [
    'non-UTF-8 bytes (base64)',
    () => Buffer.from(Array.from({ length: MIB }, (_, i) => ((i * 7919 + 0x80) % 256) | 0x80)),
    'application/octet-stream',
  ],
  ['" characters', () => Buffer.alloc(MIB, 0x22), 'text/plain'],
  ['JSON-heavy text', () => jsonHeavy(MIB), 'application/json'],
  ['0x01 bytes', () => Buffer.alloc(MIB, 0x01), 'text/plain'],
  ['0x01 bytes as a form', () => Buffer.alloc(MIB, 0x01), 'application/x-www-form-urlencoded'],
];

/**
 * A JSON document of `bytes` bytes made of short quoted keys and values, as webhook payloads are:
 * about one byte in four is a quote, which v1 JSON escapes.
 * @param {number} bytes
 */
function jsonHeavy(bytes) {
  const item = '{"id":"evt_1","type":"charge.succeeded","ok":true,"tags":["a","b","c"]}';
  const count = Math.floor((bytes - 2) / (item.length + 1));
  return Buffer.from(`[${Array(count).fill(item).join(',')}]`.padEnd(bytes, ' '));
}

/**
 * Posts `count` copies of `body` to the endpoints in turn, a few at a time; resolves with the statuses.
 * @param {number} port
 * @param {string[]} paths
 * @param {Buffer<ArrayBuffer>} body
 * @param {string} contentType
 * @param {number} count
 */
async function postBodies(port, paths, body, contentType, count) {
  /** @type {number[]} */
  const statuses = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        const path = paths[next++ % paths.length];
        const response = await fetch(`http://127.0.0.1:${port}${path}`, {
          method: 'POST',
          body,
          headers: { 'content-type': contentType },
        });
        await response.arrayBuffer();
        statuses.push(response.status);
      }
    }),
  );
  return statuses;
}

/**
 * The stored bytes a server reports in its metrics.
 * @param {number} port
 */
async function storedBytesOf(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(/^hookwatch_stored_bytes (\d+)/m.exec(text)?.[1] ?? NaN);
}

/**
 * One encoding case: `count` bodies stored on one endpoint of a fresh server.
 * @param {(typeof ENCODING_CASES)[number]} encodingCase
 * @param {number} count
 */
async function storedBodies([label, makeBody, contentType], count) {
  const server = await startServer('hookwatch-gc', {
    MAX_STORED_BYTES: String(256 * MIB),
    MAX_STORED_BYTES_PER_ENDPOINT: String(64 * MIB),
  });
  const watcher = await startWatcher(server, { endpoints: 1 });
  const paths = [new URL(watcher.urls[0]).pathname];
  const before = await settledMemory(server);
  const statuses = await postBodies(server.port, paths, makeBody(), contentType, count);
  const after = await settledMemory(server);
  const stored = await storedBytesOf(server.port);
  watcher.stop();
  server.child.kill();
  return {
    label,
    ok: statuses.filter((s) => s === 200).length,
    rssBytesPerBody: (after.rss - before.rss) / count,
    storedBytesPerBody: stored / count,
  };
}

/**
 * A server whose whole stored-bytes budget is sent 2.5 times over in the worst case (0x01 bytes
 * as a form), its RSS sampled while it fills.
 * @param {number} budget
 */
async function fullBudget(budget) {
  const server = await startServer('hookwatch', {
    MAX_STORED_BYTES: String(budget),
    MAX_STORED_BYTES_PER_ENDPOINT: String(16 * MIB),
  });
  const watcher = await startWatcher(server, { endpoints: 12 });
  const paths = watcher.urls.map((url) => new URL(url).pathname);
  const rssBefore = rssBytes(server.pid);
  const stopSampling = sampleRss(server.pid);
  const sent = Math.ceil((2.5 * budget) / MIB);
  const [, , , , form] = ENCODING_CASES;
  await postBodies(server.port, paths, form[1](), form[2], sent);
  const peaks = stopSampling();
  const stored = await storedBytesOf(server.port);
  const result = {
    budgetMiB: budget / MIB,
    sentMiB: sent,
    storedMiB: stored / MIB,
    rssBeforeMiB: rssBefore / MIB,
    rssPeakMiB: Math.max(peaks.firstHalfPeakMiB, peaks.secondHalfPeakMiB),
    rssAfterMiB: rssBytes(server.pid) / MIB,
  };
  watcher.stop();
  server.child.kill();
  return result;
}

/** @param {import('../common.mjs').Config} config */
export async function storedBodiesPhase(config) {
  const results = [];
  for (const encodingCase of ENCODING_CASES) results.push(await storedBodies(encodingCase, 16));
  return { storedBodies: results, fullBudget: await fullBudget(config.quick ? 64 * MIB : 128 * MIB) };
}
