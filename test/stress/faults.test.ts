import { afterEach, describe, expect, it } from 'vitest';
import { SocketClient } from '../helpers/socket-client.js';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { pool } from './raw.js';

const tcpOf = (client: SocketClient) =>
  (client.socket as unknown as { _socket: { destroy(): void; pause(): void } })._socket;
const timeouts = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;

describe('faults', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('forgets watchers that vanish without a close frame, and keeps serving the rest', async () => {
    server = await startServer({ liveConnectsPerAddress: 0, maxLiveSocketsPerAddress: 1000, graceMs: 60_000 });
    const s = server;
    const owner = await SocketClient.create(s.wsUrl);
    const { id, key, url } = owner.welcome.endpoint;
    const ghosts = await Promise.all(Array.from({ length: 30 }, () => SocketClient.join(s.wsUrl, id, key)));
    expect(s.app.hub.watcherCount(id)).toBe(31);
    for (const ghost of ghosts) tcpOf(ghost.client).destroy();
    await expect.poll(() => s.app.hub.watcherCount(id), { timeout: 5000 }).toBe(1);
    expect(s.app.websocketServer.clients.size).toBe(1);
    await send(url, { method: 'POST', body: 'after the ghosts' });
    expect((await owner.client.requests(1))[0]?.body).toBe('after the ghosts');
    await owner.client.close();
  });

  it('cuts off a watcher that never reads while requests flow, and the others get every request', async () => {
    server = await startServer({
      liveConnectsPerAddress: 0,
      maxLiveSocketsPerAddress: 1000,
      rateLimitPerEndpoint: 0,
      rateLimitPerAddress: 0,
      maxSocketBufferBytes: 64 * 1024,
    });
    const s = server;
    const reader = await SocketClient.create(s.wsUrl);
    const { id, key, url } = reader.welcome.endpoint;
    const other = await SocketClient.join(s.wsUrl, id, key);
    const stuck = await SocketClient.join(s.wsUrl, id, key);
    tcpOf(stuck.client).pause();
    // Loopback kernel buffers absorb several MiB before the server's own buffer starts to grow.
    const body = 'p'.repeat(100 * 1024);
    let sent = 0;
    while (s.app.hub.watcherCount(id) === 3 && sent < 300) {
      expect((await send(url, { method: 'POST', body })).status).toBe(200);
      sent++;
    }
    expect(s.app.hub.watcherCount(id)).toBe(2);
    expect((await reader.client.requests(sent, 10_000)).map((r) => r.seq)).toEqual(
      Array.from({ length: sent }, (_, i) => i + 1),
    );
    expect((await other.client.requests(sent, 10_000)).length).toBe(sent);
    stuck.client.socket.terminate();
    const metrics = (await send(`${s.baseUrl}/metrics`)).text;
    expect(metrics).toMatch(/hookwatch_rejections_total\{reason="slow_watcher"\} 1/);
    await Promise.all([reader.client.close(), other.client.close()]);
  });

  it('leaks no endpoint, watcher, socket, timer or listener over 1,000 connects and disconnects', async () => {
    server = await startServer({
      liveConnectsPerAddress: 0,
      maxLiveSocketsPerAddress: 1000,
      graceMs: 0,
      logLevel: 'warn',
    });
    const s = server;
    const timersBefore = timeouts();
    const listenersBefore = s.app.server.listenerCount('connection') + s.app.server.listenerCount('upgrade');

    // 500 sockets that create an endpoint and leave at once.
    await pool(
      Array.from({ length: 500 }, () => async () => {
        const { client } = await SocketClient.create(s.wsUrl);
        await client.close();
      }),
      25,
    );
    // 500 sockets that join one endpoint and leave, some cleanly, some by cutting the connection.
    const owner = await SocketClient.create(s.wsUrl);
    const { id, key, url } = owner.welcome.endpoint;
    await pool(
      Array.from({ length: 500 }, (_, i) => async () => {
        const { client } = await SocketClient.join(s.wsUrl, id, key);
        if (i % 2 === 0) await client.close();
        else {
          tcpOf(client).destroy();
          await client.closed;
        }
      }),
      25,
    );
    expect((await send(url, { method: 'POST' })).status).toBe(200);
    await owner.client.close();

    await expect.poll(() => s.store.countEndpoints(), { timeout: 5000 }).toBe(0);
    await expect.poll(() => s.app.websocketServer.clients.size, { timeout: 5000 }).toBe(0);
    expect(s.app.hub.channelCount()).toBe(0);
    expect(s.app.hub.watcherTotal()).toBe(0);
    expect(s.app.server.listenerCount('connection') + s.app.server.listenerCount('upgrade')).toBe(listenersBefore);
    // Allow a few for the test's own pending work, never one per socket.
    await expect.poll(() => timeouts() - timersBefore, { timeout: 5000 }).toBeLessThanOrEqual(3);
  }, 60_000);
});
