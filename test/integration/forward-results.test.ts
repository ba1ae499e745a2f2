import { afterEach, describe, expect, it } from 'vitest';
import { SocketClient } from '../helpers/socket-client.js';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** Issue #25 item 2: a forward result stays with its request, for tabs that join later and for polling. */
describe('forward results', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('reach a tab that joins later, in its backlog right after their request, and the polling API', async () => {
    const s: TestServer = await startServer({ logLevel: 'warn' });
    cleanups.push(s.close);
    const forwarder = await SocketClient.create(s.wsUrl);
    cleanups.push(() => forwarder.client.close());
    const { id, key, url } = forwarder.welcome.endpoint;
    await send(url, { method: 'POST', body: 'one' });
    await send(url, { method: 'POST', body: 'two' });
    const report = {
      type: 'forwarded',
      seq: 1,
      target: 'http://localhost:3000/hook',
      status: 201,
      durationMs: 5,
      headers: [['Content-Type', 'text/plain']],
      body: 'made',
      bodyEncoding: 'utf8',
      bodyTruncated: false,
    } as const;
    forwarder.client.send(report);
    await forwarder.client.next('forwarded');

    const later = { client: await SocketClient.open(s.wsUrl) };
    cleanups.push(() => later.client.close());
    later.client.send({ type: 'join', endpointId: id, key });
    const order = () =>
      later.client.messages.flatMap((m) =>
        m.type === 'request'
          ? [`request ${m.request.seq}`]
          : m.type === 'forwarded'
            ? [`forwarded ${m.seq} ${m.status}`]
            : [],
      );
    await expect.poll(order).toEqual(['request 1', 'forwarded 1 201', 'request 2']);

    const polled = JSON.parse(
      (
        await send(`${s.baseUrl}/api/endpoints/${id}/requests?afterSeq=0`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).text,
    ) as { forwarded: Array<{ seq: number; status: number }> };
    expect(polled.forwarded.map((f) => [f.seq, f.status])).toEqual([[1, 201]]);
  });
});
