// @ts-check
// What a run reads about its processes and cores: CPU time, RSS and core use from /proc, and the
// V8 heap of a server started as 'hookwatch-gc'.
import { readFileSync } from 'node:fs';
import { KIB, MIB } from './common.mjs';
import { nextMessage } from './processes.mjs';
import { cpuTimes } from './server-env.mjs';

/**
 * A process's CPU time so far, user and system, in seconds.
 * @param {number} pid
 */
export const cpuSeconds = (pid) => {
  const { user, system } = cpuTimes(pid);
  return user + system;
};

/** @param {number} pid */
export const rssBytes = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * KIB;

/**
 * RSS and V8 heap in use after a full GC, for a server started as 'hookwatch-gc'.
 * @param {import('./processes.mjs').Server} server
 */
export async function settledMemory(server) {
  const done = nextMessage(server.child, (message) => message?.gcDone, 10_000);
  server.child.send('gc');
  const { heapUsed, heapTotal } = await done;
  return { rss: rssBytes(server.pid), heapUsed, heapTotal };
}

/**
 * Per-core [busy, total] jiffies for cores 0 and 1, from /proc/stat.
 * @returns {[number, number][]}
 */
export const coreTimes = () =>
  readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((line) => /^cpu[01] /.test(line))
    .map((line) => {
      const ticks = line.split(/\s+/).slice(1, 9).map(Number);
      const total = ticks.reduce((a, b) => a + b, 0);
      return [total - ticks[3] - ticks[4], total];
    });

/**
 * The share of cores 0 and 1 in use since `before` (from coreTimes()).
 * @param {[number, number][]} before
 */
export const coresBusy = (before) =>
  coreTimes().map(([busy, total], i) => (busy - before[i][0]) / Math.max(1, total - before[i][1]));

/**
 * Samples a process's RSS every 200 ms; the returned stop() gives the peak of each half of the run, in MiB.
 * @param {number} pid
 */
export function sampleRss(pid) {
  /** @type {number[]} */
  const samples = [];
  const timer = setInterval(() => samples.push(rssBytes(pid)), 200);
  return () => {
    clearInterval(timer);
    const middle = Math.floor(samples.length / 2);
    /** @param {number[]} list */
    const peak = (list) => (list.length === 0 ? NaN : Math.max(...list) / MIB);
    return { firstHalfPeakMiB: peak(samples.slice(0, middle)), secondHalfPeakMiB: peak(samples.slice(middle)) };
  };
}
