import { describe, expect, it } from 'vitest';
import { createUtcTimeFormatter } from '../../src/capture/utc-time.js';

describe('createUtcTimeFormatter', () => {
  it('formats exactly as toISOString, across seconds, days and years, in any order', () => {
    const format = createUtcTimeFormatter();
    const times = [
      0,
      1,
      9,
      10,
      99,
      100,
      999,
      1000,
      59_999,
      60_000,
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1),
    ];
    // Seeded walk: steps of 0-2,999 ms forwards and occasionally back, so the cached second
    // is both reused and replaced.
    let ms = Date.UTC(2026, 10, 23, 11, 52, 11, 5);
    let seed = 7;
    for (let i = 0; i < 20_000; i++) {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      ms += (seed % 3000) - (i % 97 === 0 ? 5000 : 0);
      times.push(ms);
    }
    for (const time of times) expect(format(time)).toBe(new Date(time).toISOString());
  });
});
