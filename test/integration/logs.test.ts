import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { SocketClient } from '../helpers/socket-client.js';
import { send } from '../helpers/http.js';
import { startServer } from '../helpers/server.js';

describe('logs', () => {
  it('never contain a body, a header value or a watch key, even at trace level', async () => {
    const server = await startServer({ logLevel: 'trace', readLimitBytes: 4096, maxBodyBytes: 1024, graceMs: 0 });
    try {
      const { client, welcome } = await SocketClient.create(server.wsUrl);
      const { url, key, id } = welcome.endpoint;
      const bodySecret = 'body-secret-3f9a1c';
      const headerSecret = 'header-secret-77b2e0';
      await send(`${url}/path?q=query-visible`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${headerSecret}`,
          cookie: `session=${headerSecret}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ token: bodySecret }),
      });
      await send(url, { method: 'PUT', body: `${bodySecret}${'x'.repeat(8000)}` }).catch(() => undefined);
      client.send({
        type: 'set-response',
        response: { status: 200, body: `reply-${bodySecret}`, contentType: 'text/plain' },
      });
      await client.next('response');
      const wrong = await SocketClient.open(server.wsUrl);
      wrong.send({ type: 'join', endpointId: id, key: `${key}x` });
      await wrong.closed;
      wrong.socket.terminate();
      client.socket.send('{"type":"join","endpointId":"x","key":"' + key + '"');
      await client.next('error');
      await client.requests(2);
      await client.close();
      await expect.poll(async () => (await send(url)).status).toBe(404);

      const logs = server.logs();
      expect(logs).toContain('request captured');
      for (const secret of [bodySecret, headerSecret, key]) expect(logs).not.toContain(secret);
    } finally {
      await server.close();
    }
  });

  it('log a sender that leaves mid-body as a debug line, not an error', async () => {
    const server = await startServer({ logLevel: 'debug' });
    try {
      const { port } = new URL(server.baseUrl);
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST /api/endpoints HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`,
        () => socket.destroy(),
      );
      await expect.poll(() => server.logs()).toContain('request aborted');
      const errors = server
        .logs()
        .split('\n')
        .filter((line) => line !== '' && (JSON.parse(line) as { level: number }).level >= 50);
      expect(errors).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
