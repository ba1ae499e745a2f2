import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/one-process/memory-store.js';
import type { Bus } from '../../src/bus/bus.js';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { defaultConfig } from '../../src/config.js';
import { storeLimits, type Store } from '../../src/store/store.js';
import { SocketClient } from '../helpers/socket-client.js';
import { send } from '../helpers/http.js';
import { startServer } from '../helpers/server.js';

describe('faults', () => {
  it('an exception while handling one request or one socket message answers INTERNAL and leaves the process serving', async () => {
    const bus = createMemoryBus();
    const memory = createMemoryStore({ ...storeLimits(defaultConfig()), bus });
    let failNext = 0;
    const flaky: Store = {
      ...memory,
      async appendRequest(id, kind, draft, capturedAtMs) {
        if (failNext > 0 && failNext--) throw new Error('store exploded');
        return memory.appendRequest(id, kind, draft, capturedAtMs);
      },
      async clearRequests(id) {
        if (failNext > 0 && failNext--) throw new Error('store exploded');
        return memory.clearRequests(id);
      },
    };
    const server = await startServer({}, { store: flaky, bus });
    try {
      const { client, welcome } = await SocketClient.create(server.wsUrl);
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

  it('a join that fails inside the store leaves the socket free to join again', async () => {
    const bus = createMemoryBus();
    const memory = createMemoryStore({ ...storeLimits(defaultConfig()), bus });
    let failNext = false;
    const flaky: Store = {
      ...memory,
      async getEndpoint(id) {
        if (failNext) {
          failNext = false;
          throw new Error('store exploded');
        }
        return memory.getEndpoint(id);
      },
    };
    const server = await startServer({ logLevel: 'fatal' }, { store: flaky, bus });
    try {
      const { client: owner, welcome } = await SocketClient.create(server.wsUrl);
      const client = await SocketClient.open(server.wsUrl);
      failNext = true;
      client.send({ type: 'join', endpointId: welcome.endpoint.id, key: welcome.endpoint.key });
      expect((await client.next('error')).error.code).toBe('INTERNAL');
      client.send({ type: 'join', endpointId: welcome.endpoint.id, key: welcome.endpoint.key });
      expect((await client.next('welcome')).endpoint.id).toBe(welcome.endpoint.id);
      await client.close();
      await owner.close();
    } finally {
      await server.close();
    }
  });

  it('a bus that cannot subscribe keeps no watcher, channel or created endpoint', async () => {
    const bus = createMemoryBus();
    const store = createMemoryStore({ ...storeLimits(defaultConfig()), bus });
    const failing: Bus = {
      ...bus,
      onMessage: (handler) => bus.onMessage(handler),
      subscribe: async () => Promise.reject(new Error('bus down')),
    };
    const server = await startServer({ logLevel: 'fatal' }, { store, bus: failing });
    try {
      const client = await SocketClient.open(server.wsUrl);
      client.send({ type: 'create' });
      expect((await client.next('error')).error.code).toBe('STORE_UNAVAILABLE');
      expect(await client.closed).toBe(1013);
      expect(server.app.hub.watcherTotal()).toBe(0);
      expect(server.app.hub.channelCount()).toBe(0);
      expect(await store.countEndpoints()).toBe(0);
    } finally {
      await server.close();
    }
  });
});
