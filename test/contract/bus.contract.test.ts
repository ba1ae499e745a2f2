import { describe, expect, it } from 'vitest';
import type { Bus, BusMessage } from '../../src/bus/bus.js';
import { createMemoryBus } from '../../src/bus/memory-bus.js';

/** What every Bus backend must do, written once (a Redis backend joins the list). */
const backends: Array<[string, () => Bus]> = [['memory', createMemoryBus]];

async function collect(bus: Bus, endpointId: string) {
  const seen: BusMessage[] = [];
  const unsubscribe = await bus.subscribe(endpointId, (message) => seen.push(message));
  return { seen, unsubscribe };
}

describe.each(backends)('Bus contract: %s', (_name, makeBus) => {
  it('delivers each message once to every subscriber of that endpoint, in publish order', async () => {
    const bus = makeBus();
    const a = await collect(bus, 'e1');
    const b = await collect(bus, 'e1');
    const other = await collect(bus, 'e2');
    for (let seq = 1; seq <= 3; seq++) await bus.publish('e1', { seq, data: `m${seq}` });
    await expect.poll(() => b.seen.length).toBe(3);
    expect(a.seen.map((m) => m.data)).toEqual(['m1', 'm2', 'm3']);
    expect(b.seen).toEqual(a.seen);
    expect(other.seen).toEqual([]);
  });

  it('stops delivering after unsubscribe, and publishing with no subscriber is fine', async () => {
    const bus = makeBus();
    const a = await collect(bus, 'e1');
    await a.unsubscribe();
    await bus.publish('e1', { data: 'after' });
    await bus.publish('nobody', { data: 'x' });
    const late = await collect(bus, 'e1');
    await bus.publish('e1', { data: 'late' });
    await expect.poll(() => late.seen.length).toBe(1);
    expect(a.seen).toEqual([]);
  });
});
