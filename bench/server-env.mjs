// @ts-check
// What the bench and the profiler both give a server they start: a free port, and settings that
// let one machine's load through (every request and socket comes from 127.0.0.1); and how both
// read the CPU time it spends.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/**
 * A process's CPU time so far, user and system (all its threads), in seconds.
 * @param {number} pid
 */
export function cpuTimes(pid) {
  // utime and stime are fields 14 and 15 of /proc/<pid>/stat, in clock ticks.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS };
}

/**
 * A port free on 127.0.0.1 right now.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/**
 * The environment of a measured server on `port`: rate limits off, per-address caps out of the way.
 * @param {number} port
 */
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
    // Kept endpoints in memory: the builds of one run would otherwise share ./data, which one
    // process holds at a time (the kept phase gives its servers a DATA_DIR of their own).
    DATA_DIR: 'none',
  };
}
