// {{json:<path>}} in a rule's JSON answer (issue 34, item 5): the receiver inserts the value as
// JSON, so `{"nested":{{json:obj}}}` answers valid JSON whether obj is there or not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointInfo } from '../../src/shared/protocol.js';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('a rule answer with {{json:<path>}}', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ logLevel: 'warn' });
  });
  afterAll(() => server?.close());

  it('answers valid JSON with the value inserted as JSON, null when missing', async () => {
    const created = JSON.parse(
      (
        await send(`${server.baseUrl}/api/endpoints`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"kind":"kept"}',
        })
      ).text,
    ) as EndpointInfo;
    const response = {
      status: 200,
      body: '{}',
      contentType: 'application/json',
      headers: [],
      delayMs: 0,
      rules: [
        {
          name: 'echo',
          answer: {
            status: 200,
            contentType: 'application/json',
            body: '{"nested":{{json:obj}},"quoted":"{{json.obj}}"}',
            headers: [['X-Obj', '{{json:obj}}']],
          },
        },
      ],
    };
    const put = await send(`${server.baseUrl}/api/endpoints/${created.id}/response`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${created.key}` },
      body: JSON.stringify(response),
    });
    expect(put.status).toBe(200);

    const withObj = await send(created.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"obj":{"a":[1,2],"s":"x\\ny"}}',
    });
    expect(withObj.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(withObj.text)).toEqual({ nested: { a: [1, 2], s: 'x\ny' }, quoted: '{"a":[1,2],"s":"x\\ny"}' });
    expect(withObj.headers['x-obj']).toBe('{"a":[1,2],"s":"x\\ny"}');

    const without = await send(created.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(JSON.parse(without.text)).toEqual({ nested: null, quoted: '' });

    // A value too large to insert whole is null, never half a value.
    const big = JSON.stringify({ obj: { list: Array.from({ length: 30_000 }, (_, i) => i) } });
    const large = await send(created.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    expect(JSON.parse(large.text).nested).toBeNull();
  });
});
