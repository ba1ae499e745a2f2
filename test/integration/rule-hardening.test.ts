import { request, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * What an answer rule may cost and set: findings 7, 8, 12, 13 and 14 of the hardening issue,
 * each against a real server.
 */
describe('answer rules under hostile input', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function kept(overrides: Parameters<typeof startServer>[0] = {}) {
    const s: TestServer = await startServer(overrides);
    cleanups.push(s.close);
    const made = await send(`${s.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind":"kept"}',
    });
    const { id, key, url } = JSON.parse(made.text) as { id: string; key: string; url: string };
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    return {
      s,
      url,
      setResponse: (response: unknown) =>
        send(`${s.baseUrl}/api/endpoints/${id}/response`, {
          method: 'PUT',
          headers: auth,
          body: JSON.stringify(response),
        }),
      requests: async () =>
        (
          JSON.parse((await send(`${s.baseUrl}/api/endpoints/${id}/requests?afterSeq=0`, { headers: auth })).text) as {
            requests: CapturedRequest[];
          }
        ).requests,
    };
  }

  it('8: a body too deep to inspect is captured, and a json rule just does not match it', async () => {
    const e = await kept({ keptMaxBodyBytes: 1024 * 1024 });
    const rules = [
      { when: { json: { a: '[[1]]' } }, answer: { status: 203 } },
      { when: { json: { 'a.0.0.0': '[]' } }, answer: { status: 202 } },
      { when: { json: { b: '*' } }, answer: { status: 201, body: '{{json.a}}' } },
    ];
    expect((await e.setResponse({ status: 200, rules })).status).toBe(200);
    const depth = 200_000;
    const body = `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const answer = await send(e.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    // Too deep to look into: neither rule matches, and the request is still stored.
    expect(answer.status).toBe(200);
    const [stored] = await e.requests();
    expect(stored?.size).toBe(body.length);
    expect(stored?.answer.by).toBe('default');
  });

  it('7: twenty rules of ten json conditions on a 1 MB body cost one look at each value, not one stringify per condition', async () => {
    const e = await kept({ keptMaxBodyBytes: 2 * 1024 * 1024, readLimitBytes: 4 * 1024 * 1024 });
    const json = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, { big: 'x'.repeat(100_000) }]));
    const rules = Array.from({ length: 20 }, (_, r) => ({
      when: { json: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, `{"big":"${r}"}`])) },
      answer: { status: 400 + r },
    }));
    expect((await e.setResponse({ status: 200, rules })).status).toBe(200);
    const answer = await send(e.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    expect(answer.status).toBe(200);
    // A value that is exactly the expected text still matches, and one that only starts with it does not.
    expect(
      (await e.setResponse({ status: 200, rules: [{ when: { json: { a: '{"b":1}' } }, answer: { status: 201 } }] }))
        .status,
    ).toBe(200);
    expect((await send(e.url, { method: 'POST', body: '{"a":{"b":1}}' })).status).toBe(201);
    expect((await send(e.url, { method: 'POST', body: '{"a":{"b":12}}' })).status).toBe(200);
  });

  it('7: ten headers of a hundred placeholders over a 500,000-character value are filled in at the cost of what is sent', async () => {
    const e = await kept({ keptMaxBodyBytes: 1024 * 1024 });
    const headerValue = '{{json.a}}'.repeat(100);
    const headers = Array.from({ length: 10 }, (_, i) => [`X-Echo-${i}`, headerValue]);
    expect(
      (
        await e.setResponse({
          status: 200,
          rules: [{ answer: { status: 200, headers, body: `{"v":"${'{{json.a}}'.repeat(100)}"}` } }],
        })
      ).status,
    ).toBe(200);
    const started = Date.now();
    const answer = await sendLargeHeaders(e.url, JSON.stringify({ a: 'y'.repeat(500_000) }));
    expect(answer.status).toBe(200);
    expect(String(answer.headers['x-echo-9']).length).toBe(8192);
    // A value that a header loses entirely (control characters) is not filled a hundred times over.
    const empty = await sendLargeHeaders(e.url, JSON.stringify({ a: '\u0001'.repeat(500_000) }));
    expect(empty.status).toBe(200);
    expect(empty.headers['x-echo-9']).toBe('');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('13: a JSON body filled past its cap is cut inside the values, never mid-escape, and stays valid JSON', async () => {
    const e = await kept({ keptMaxBodyBytes: 1024 * 1024 });
    expect(
      (
        await e.setResponse({
          status: 200,
          rules: [
            {
              answer: { body: `{"values":[${Array.from({ length: 8 }, () => '"{{json.a}}"').join(',')}],"end":true}` },
            },
          ],
        })
      ).status,
    ).toBe(200);
    // Control characters take six characters escaped: the cap falls inside an escape unless values are cut first.
    const answer = await send(e.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: '\u0001'.repeat(60_000) }),
    });
    expect(answer.status).toBe(200);
    const parsed = JSON.parse(answer.text) as { values: string[]; end: boolean };
    expect(parsed.end).toBe(true);
    expect(answer.text.length).toBeLessThanOrEqual(256 * 1024);
    expect(parsed.values.join('').length).toBeGreaterThan(40_000);
  });

  it('14: a __proto__ condition is refused, not dropped into a rule that matches everything', async () => {
    const e = await kept();
    for (const when of ['{"json":{"__proto__":"x"}}', '{"query":{"__proto__":"x"}}', '{"headers":{"__proto__":"x"}}']) {
      const answer = await send(`${e.url.replace(/\/api\/webhook-endpoint\/.*/, '')}/api/endpoints/x/response`, {
        method: 'PUT',
      });
      expect(answer.status).toBe(404);
      const refused = await e.setResponse(
        JSON.parse(`{"status":200,"rules":[{"when":${when},"answer":{"status":500}}]}`),
      );
      expect(refused.status).toBe(400);
      expect(refused.text).toMatch(/may not be named __proto__/);
    }
    expect((await send(e.url, { method: 'POST' })).status).toBe(200);
  });

  it('12: headers that act on the whole origin are refused in a configured answer and dropped from a local one', async () => {
    const e = await kept();
    for (const name of [
      'NEL',
      'Report-To',
      'Reporting-Endpoints',
      'WWW-Authenticate',
      'Service-Worker-Allowed',
      'Content-Disposition',
    ]) {
      const refused = await e.setResponse({ status: 200, headers: [[name, 'x']] });
      expect(refused.status, name).toBe(400);
      expect(refused.text).toMatch(/may not be configured/);
      const inRule = await e.setResponse({ status: 200, rules: [{ answer: { headers: [[name, 'x']] } }] });
      expect(inRule.status, name).toBe(400);
    }
  });
});

/** A POST whose answer may carry more header bytes than node:http takes by default (16 KiB). */
function sendLargeHeaders(url: string, body: string): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        maxHeaderSize: 1024 * 1024,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
