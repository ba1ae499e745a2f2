// One captured request deleted by its endpoint's owner (issue 34, item 1):
// `DELETE /api/endpoints/<id>/requests/<seq>`, announced to every watcher, gone from every read.
import { describe, expect, it } from 'vitest';
import { SocketClient } from '../helpers/socket-client.js';
import { send } from '../helpers/http.js';
import { startServer } from '../helpers/server.js';

describe('deleting one request', () => {
  it('deletes it for every watcher and every read; its seq is not given again; bad seqs and wrong keys are refused', async () => {
    const server = await startServer();
    try {
      const { client, welcome } = await SocketClient.create(server.wsUrl);
      const { url, key, id } = welcome.endpoint;
      const other = (await SocketClient.join(server.wsUrl, id, key)).client;
      for (let i = 1; i <= 3; i++) await send(`${url}/n/${i}`, { method: 'POST', body: `{"n":${i}}` });
      await client.requests(3);
      await other.requests(3);
      const api = (path: string, method = 'GET', withKey = key) =>
        send(`${server.baseUrl}/api/endpoints/${id}${path}`, {
          method,
          headers: { authorization: `Bearer ${withKey}` },
        });

      const deleted = await api('/requests/2', 'DELETE');
      expect([deleted.status, deleted.text]).toEqual([204, '']);
      expect(await client.next('removed')).toEqual({ type: 'removed', seq: 2 });
      expect(await other.next('removed')).toEqual({ type: 'removed', seq: 2 });
      const log = JSON.parse((await api('/requests?afterSeq=0')).text) as {
        requests: Array<{ seq: number; subPath: string }>;
        lastSeq: number;
        gap: boolean;
      };
      expect(log.requests.map((request) => [request.seq, request.subPath])).toEqual([
        [1, '/n/1'],
        [3, '/n/3'],
      ]);
      expect([log.lastSeq, log.gap]).toEqual([3, false]);

      const again = await api('/requests/2', 'DELETE');
      expect(again.status).toBe(404);
      expect(JSON.parse(again.text)).toEqual({
        error: {
          code: 'REQUEST_NOT_FOUND',
          message: 'Request #2 is not stored: it was deleted, cleared, or trimmed to make room for newer ones',
        },
      });
      for (const bad of ['0', '-1', 'x', '1.5', '1e3', '0x2', '9'.repeat(40)]) {
        const refused = await api(`/requests/${bad}`, 'DELETE');
        expect([bad, refused.status, (JSON.parse(refused.text) as { error: { code: string } }).error.code]).toEqual([
          bad,
          400,
          'INVALID_REQUEST',
        ]);
      }
      // Without the watch key: the same answer as an unknown endpoint, and nothing deleted.
      expect((await api('/requests/1', 'DELETE', 'wrong-key')).status).toBe(404);
      expect(
        (
          await send(`${server.baseUrl}/api/endpoints/nope/requests/1`, {
            method: 'DELETE',
            headers: { authorization: `Bearer ${key}` },
          })
        ).status,
      ).toBe(404);

      await send(`${url}/n/4`, { method: 'POST', body: '{"n":4}' });
      expect((await client.requests(1))[0]?.seq).toBe(4);
      const after = JSON.parse((await api('/requests?afterSeq=0')).text) as { requests: Array<{ seq: number }> };
      expect(after.requests.map((request) => request.seq)).toEqual([1, 3, 4]);
      expect((await server.store.stats()).storedBytes).toBeGreaterThan(0);
      await client.close();
      await other.close();
    } finally {
      await server.close();
    }
  });
});
