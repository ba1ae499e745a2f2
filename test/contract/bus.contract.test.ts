import { describe, expect, it } from 'vitest';
import type { Bus, BusMessage } from '../../src/bus/bus.js';
import { createMemoryBus } from '../../src/bus/memory-bus.js';

/** What every Bus backend must do, written once (a Redis backend joins the list). */
const backends: Array<[string, () => Bus]> = [['memory', createMemoryBus]];

function collect(bus: Bus) {
  const seen: Array<[string, BusMessage]> = [];
  bus.onMessage((endpointId, message) => seen.push([endpointId, message]));
  return seen;
}

describe.each(backends)('Bus contract: %s', (_name, makeBus) => {
  it('delivers each message of a subscribed endpoint once, in publish order, and nothing else', async () => {
    const bus = makeBus();
    const seen = collect(bus);
    await bus.subscribe('e1');
    for (let seq = 1; seq <= 3; seq++) await bus.publish('e1', { seq, data: `m${seq}` });
    await bus.publish('e2', { data: 'not subscribed' });
    await expect.poll(() => seen.length).toBe(3);
    expect(seen.map(([endpointId, message]) => `${endpointId}:${message.data}`)).toEqual(['e1:m1', 'e1:m2', 'e1:m3']);
  });

  it('stops delivering after unsubscribe, and resubscribing in call order works', async () => {
    const bus = makeBus();
    const seen = collect(bus);
    await bus.subscribe('e1');
    await bus.unsubscribe('e1');
    await bus.publish('e1', { data: 'after' });
    await bus.publish('nobody', { data: 'x' });
    // Unsubscribe and subscribe issued back to back (an endpoint purged as a watcher arrives).
    const unsubscribing = bus.unsubscribe('e1');
    const subscribing = bus.subscribe('e1');
    await Promise.all([unsubscribing, subscribing]);
    await bus.publish('e1', { data: 'late' });
    await expect.poll(() => seen.length).toBe(1);
    expect(seen[0]?.[1].data).toBe('late');
  });
});
