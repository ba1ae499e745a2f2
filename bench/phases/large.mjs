// @ts-check
// The large-bodies phase (--only=large): 1 MiB bodies over the stored cap (stored truncated,
// delivered) and 20 MiB bodies over the read limit (answered 413), with the server's RSS.
import { KIB, MIB, WARMUP_SECONDS } from '../common.mjs';
import { load, measure } from '../load.mjs';
import { cpuSeconds, rssBytes, sampleRss } from '../proc.mjs';
import { startServer, startWatcher } from '../processes.mjs';

/**
 * 20 MiB bodies for config.seconds after a warm-up: how many were answered (413) and at what CPU.
 * @param {import('../processes.mjs').Server} server
 * @param {string} url
 * @param {number} seconds
 */
async function overTheLimit(server, url, seconds) {
  await load(url, { body: 'z'.repeat(20 * MIB), connections: 10, seconds: WARMUP_SECONDS });
  const cpuBefore = cpuSeconds(server.pid);
  const stopSampling = sampleRss(server.pid);
  const over = await load(url, { body: 'z'.repeat(20 * MIB), connections: 10, seconds });
  const rss = stopSampling();
  const cpu = cpuSeconds(server.pid) - cpuBefore;
  return {
    rps: over.non2xx / seconds,
    answered413: over.non2xx,
    errors: over.errors,
    cpuMillisPerRequest: (cpu / Math.max(1, over.non2xx)) * 1000,
    rssAfterMiB: rssBytes(server.pid) / MIB,
    ...rss,
  };
}

/** @param {import('../common.mjs').Config} config */
export async function largeBodiesPhase(config) {
  const server = await startServer('hookwatch', {
    MAX_BODY_BYTES: String(512 * KIB),
    READ_LIMIT_BYTES: String(10 * MIB),
  });
  const watcher = await startWatcher(server);
  const url = /** @type {string} */ (watcher.url);
  const rss0 = rssBytes(server.pid);
  const stopSampling = sampleRss(server.pid);
  const truncating = await measure(server, url, watcher, {
    body: 'z'.repeat(MIB),
    connections: 10,
    label: '1 MiB bodies',
    seconds: config.seconds,
  });
  const oneMiBRss = stopSampling();
  const rss1 = rssBytes(server.pid);
  const twentyMiB = await overTheLimit(server, url, config.seconds);
  watcher.stop();
  server.child.kill();
  const oneMiB = {
    rps: truncating.rps,
    delivered: truncating.delivery?.received,
    sent: truncating.sent,
    rssBeforeMiB: rss0 / MIB,
    rssAfterMiB: rss1 / MIB,
    ...oneMiBRss,
  };
  return { largeBodies: { oneMiB, twentyMiB } };
}
