// @ts-check
// Idle endpoints, the first part of the memory phase (--only=memory): RSS and V8 heap per endpoint
// that has one socket and no requests.
import { MIB } from '../common.mjs';
import { settledMemory } from '../proc.mjs';
import { startServer, startWatcher } from '../processes.mjs';

/**
 * RSS and heap growth per idle endpoint. A first 50 endpoints warm up the code paths, so their
 * one-time cost is not counted per endpoint.
 * @param {number} count
 * @param {string[]} nodeFlags
 */
async function idleEndpoints(count, nodeFlags) {
  const server = await startServer('hookwatch-gc', {}, nodeFlags);
  const warm = await startWatcher(server, { endpoints: 50 });
  const before = await settledMemory(server);
  const idle = await startWatcher(server, { endpoints: count });
  const after = await settledMemory(server);
  warm.stop();
  idle.stop();
  server.child.kill();
  return {
    endpoints: count,
    nodeFlags: nodeFlags.join(' '),
    rssBeforeMiB: before.rss / MIB,
    rssAfterMiB: after.rss / MIB,
    bytesPerEndpoint: (after.rss - before.rss) / count,
    heapBytesPerEndpoint: (after.heapUsed - before.heapUsed) / count,
    heapCommittedBytesPerEndpoint: (after.heapTotal - before.heapTotal) / count,
  };
}

/** @param {import('../common.mjs').Config} config */
export async function idlePhase(config) {
  const count = config.quick ? 1000 : 5000;
  // With default flags V8 grows its young generation once while thousands of sockets connect
  // (up to 2 x 16 MiB, whatever the endpoint count), which reads as several KiB per endpoint.
  // The per-endpoint figure is measured with the young generation at that size from the start.
  const idle = await idleEndpoints(count, ['--min-semi-space-size=16', '--max-semi-space-size=16']);
  return { idleEndpoints: idle, idleEndpointsDefaultFlags: await idleEndpoints(count, []) };
}
