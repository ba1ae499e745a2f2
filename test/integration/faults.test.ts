import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { createMemoryBus } from '../../src/bus/memory-bus.js';
import { defaultConfig } from '../../src/config.js';
import { storeLimits, type Store } from '../../src/store/store.js';
import { LiveClient } from '../helpers/live-client.js';
import { send } from '../helpers/http.js';
import { startServer } from '../helpers/server.js';

describe('faults', () => {
  it('an exception while handling one request or one socket message answers INTERNAL and leaves the process serving', async () => {
    const bus = createMemoryBus();
    const memory = createMemoryStore({ ...storeLimits(defaultConfig()), bus });
    let failNext = 0;
    const flaky: Store = {
      ...memory,
      async appendRequest(id, json, capturedAtMs) {
        if (failNext > 0 && failNext--) throw new Error('store exploded');
        return memory.appendRequest(id, json, capturedAtMs);
      },
      async clearRequests(id) {
        if (failNext > 0 && failNext--) throw new Error('store exploded');
        return memory.clearRequests(id);
      },
    };
    const server = await startServer({}, { store: flaky, bus });
    try {
      const { client, welcome } = await LiveClient.create(server.wsUrl);
      failNext = 1;
      const failed = await send(welcome.endpoint.url, { method: 'POST', body: 'secret-body' });
      expect(failed.status).toBe(500);
      expect(JSON.parse(failed.text)).toEqual({ error: { code: 'INTERNAL', message: 'Internal error' } });

      failNext = 1;
      client.send({ type: 'clear' });
      expect((await client.next('error')).error.code).toBe('INTERNAL');

      expect((await send(welcome.endpoint.url, { method: 'POST', body: 'fine' })).status).toBe(200);
      expect((await client.requests(1))[0]?.body).toBe('fine');
      expect(server.logs()).toContain('store exploded');
      expect(server.logs()).not.toContain('secret-body');
      await client.close();
    } finally {
      await server.close();
    }
  });
});
