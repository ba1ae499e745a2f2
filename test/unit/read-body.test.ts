import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createReadingBudget, readBody, SenderGoneError } from '../../src/capture/read-body.js';

const limits = { maxBodyBytes: 1024, readLimitBytes: 4096 };

describe('readBody', () => {
  it('rejects at once for a sender gone before reading started, instead of waiting for an event that already came', async () => {
    const budget = createReadingBudget(1 << 20);
    const stream = new PassThrough();
    stream.write('{"a":');
    stream.destroy();
    await new Promise((resolve) => stream.once('close', resolve));
    await expect(readBody(stream, limits, budget)).rejects.toBeInstanceOf(SenderGoneError);
    expect(budget.held()).toBe(0);
  });

  it('rejects when the sender goes away mid-body, giving back what it took', async () => {
    const budget = createReadingBudget(1 << 20);
    const stream = new PassThrough();
    const reading = readBody(stream, limits, budget);
    stream.write('{"a":');
    await new Promise((resolve) => setImmediate(resolve));
    expect(budget.held()).toBe(5);
    stream.destroy();
    await expect(reading).rejects.toBeInstanceOf(SenderGoneError);
    expect(budget.held()).toBe(0);
  });
});
