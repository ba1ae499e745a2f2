import { afterEach, describe, expect, it } from 'vitest';
import { ANSWER_PRESETS } from '../../src/shared/answer-presets.js';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { send } from '../helpers/http.js';
import { SocketClient } from '../helpers/socket-client.js';
import { startServer, type TestServer } from '../helpers/server.js';

const preset = (id: string, n?: number) => {
  const found = ANSWER_PRESETS.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`no preset ${id}`);
  return found.rule(n);
};

describe('answer rules', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function server(overrides: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
    const started = await startServer(overrides);
    cleanups.push(started.close);
    return started;
  }

  /** A kept endpoint made over the API, with helpers to configure it and read what it stored. */
  async function kept(s: TestServer) {
    const made = await send(`${s.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind":"kept"}',
    });
    const { id, key, url } = JSON.parse(made.text) as { id: string; key: string; url: string };
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    return {
      id,
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

  it("passes Slack's URL check with the preset, simulated with Slack's documented request", async () => {
    const s = await server();
    const e = await kept(s);
    expect((await e.setResponse({ status: 200, body: '{"ok":true}', rules: [preset('slack')] })).status).toBe(200);
    // https://api.slack.com/events/url_verification
    const challenge = '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P';
    const answer = await send(e.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl', challenge, type: 'url_verification' }),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(answer.text).toBe(challenge);
    // An ordinary event is not a URL check: the default answer.
    const event = await send(e.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"type":"event_callback"}',
    });
    expect(event.text).toBe('{"ok":true}');
    const [first, second] = await e.requests();
    expect(first?.answer).toEqual({ status: 200, delayMs: 0, by: 'rule', rule: 0, name: 'Slack URL verification' });
    expect(second?.answer).toEqual({ status: 200, delayMs: 0, by: 'default' });
  });

  it("answers each provider's URL check as the provider documents it", async () => {
    const s = await server();
    const e = await kept(s);
    const rules = ['meta', 'graph', 'twitch', 'dropbox', 'okta', 'asana'].map((id) => preset(id));
    expect((await e.setResponse({ status: 404, body: '', rules })).status).toBe(200);
    const meta = await send(`${e.url}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock`);
    expect([meta.status, meta.text]).toEqual([200, '1158201444']);
    const graph = await send(`${e.url}/graph?validationToken=Validation%3A%20Testing%20client%20application`, {
      method: 'POST',
    });
    expect([graph.status, graph.headers['content-type'], graph.text]).toEqual([
      200,
      'text/plain; charset=utf-8',
      'Validation: Testing client application',
    ]);
    const twitch = await send(e.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Twitch-Eventsub-Message-Type': 'webhook_callback_verification' },
      body: '{"challenge":"pogchamp-kappa-360noscope-vohiyo","subscription":{"id":"f1c2a387"}}',
    });
    expect([twitch.status, twitch.text]).toEqual([200, 'pogchamp-kappa-360noscope-vohiyo']);
    const dropbox = await send(`${e.url}?challenge=abc123`);
    expect([dropbox.status, dropbox.text]).toEqual([200, 'abc123']);
    const okta = await send(e.url, { headers: { 'X-Okta-Verification-Challenge': 'two"quotes"' } });
    expect([okta.status, JSON.parse(okta.text)]).toEqual([200, { verification: 'two"quotes"' }]);
    const asana = await send(e.url, {
      method: 'POST',
      headers: { 'X-Hook-Secret': 'b537207f20cbfa02357cf448134da559e8bd39d61597dcd5631b8012eae53e81' },
    });
    expect([asana.status, asana.headers['x-hook-secret']]).toEqual([
      200,
      'b537207f20cbfa02357cf448134da559e8bd39d61597dcd5631b8012eae53e81',
    ]);
    // None of them: the default.
    expect((await send(e.url, { method: 'POST', body: 'x' })).status).toBe(404);
  });

  it("gives a sender's retry loop 503, 503, 503, then 200, over the socket's set-response", async () => {
    const s = await server();
    const { client, welcome } = await SocketClient.create(s.wsUrl);
    cleanups.push(() => client.close());
    client.send({
      type: 'set-response',
      response: { status: 200, body: 'done', contentType: 'text/plain', rules: [preset('fail-then-succeed', 3)] },
    });
    expect((await client.next('response')).response.rules).toHaveLength(1);
    const seen: Array<[number, string | string[] | undefined]> = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      const answer = await send(welcome.endpoint.url, { method: 'POST', body: '{}' });
      seen.push([answer.status, answer.headers['retry-after']]);
    }
    expect(seen).toEqual([
      [503, '5'],
      [503, '5'],
      [503, '5'],
      [200, undefined],
    ]);
    const requests = await client.requests(4);
    expect(requests.map((request) => [request.answer.status, request.answer.by])).toEqual([
      [503, 'rule'],
      [503, 'rule'],
      [503, 'rule'],
      [200, 'default'],
    ]);
    // Setting the configuration again starts the count again.
    client.send({ type: 'set-response', response: { status: 200, rules: [preset('fail-then-succeed', 1)] } });
    await client.next('response');
    expect((await send(welcome.endpoint.url, { method: 'POST' })).status).toBe(503);
  });

  it('takes the first rule that matches, by method, path glob, query, header and JSON field', async () => {
    const s = await server();
    const e = await kept(s);
    const rules = [
      { name: 'deep json', when: { json: { 'items.0.id': '7', flag: 'true' } }, answer: { status: 201 } },
      { name: 'github', when: { method: 'post', path: '/github/**' }, answer: { status: 202 } },
      { name: 'bare', when: { path: '/' }, answer: { status: 203 } },
      { name: 'query', when: { query: { mode: 'x' }, headers: { 'x-any': '*' } }, answer: { status: 204 } },
    ];
    expect((await e.setResponse({ status: 418, rules })).status).toBe(200);
    const status = async (path: string, options: Parameters<typeof send>[1] = {}) =>
      (await send(`${e.url}${path}`, options)).status;
    expect(
      await status('/x', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"items":[{"id":7}],"flag":true}',
      }),
    ).toBe(201);
    expect(await status('/x', { method: 'POST', body: '{"items":[{"id":8}],"flag":true}' })).toBe(418);
    expect(await status('/github', { method: 'POST' })).toBe(202);
    expect(await status('/github/a/b', { method: 'POST' })).toBe(202);
    expect(await status('/github/a', { method: 'GET' })).toBe(418);
    expect(await status('')).toBe(203);
    expect(await status('/?q=1')).toBe(203);
    expect(await status('/z?mode=x', { headers: { 'X-Any': '' } })).toBe(204);
    expect(await status('/z?mode=x')).toBe(418);
  });

  it('fills placeholders: escaped in a JSON body, without control characters in a header', async () => {
    const s = await server();
    const e = await kept(s);
    const rule = {
      answer: {
        contentType: 'application/json',
        body: '{"echo":"{{json.text}}","m":"{{method}}","p":"{{path}}","n":"{{seq}}","q":"{{query.who}}","h":"{{header.x-tag}}","none":"{{json.missing}}","obj":"{{json.obj}}"}',
        headers: [
          ['X-Echo', '{{json.evil}}'],
          ['X-Latin', '{{header.x-latin}}'],
        ],
      },
    };
    expect((await e.setResponse({ status: 200, rules: [rule] })).status).toBe(200);
    const text = 'quote " backslash \\ newline \n tab \t </script>';
    const answer = await send(`${e.url}/a/b?who=me`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-tag': 'tagged', 'x-latin': 'caf\u00e9' },
      body: JSON.stringify({ text, obj: { a: [1] }, evil: 'a\r\nSet-Cookie: stolen=1\u0001\u007f\u00e9b' }),
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({
      echo: text,
      m: 'PUT',
      p: '/a/b',
      n: '1',
      q: 'me',
      h: 'tagged',
      none: '',
      obj: '{"a":[1]}',
    });
    // CR, LF, controls and non-ASCII go: no header can be injected.
    expect(answer.headers['x-echo']).toBe('aSet-Cookie: stolen=1b');
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(answer.headers['x-latin']).toBe('caf');
  });

  it('answers a rule with chance about that share of its matches', async () => {
    const s = await server();
    const e = await kept(s);
    expect((await e.setResponse({ status: 200, rules: [preset('fail-percent', 50)] })).status).toBe(200);
    let failed = 0;
    for (let i = 0; i < 200; i++) if ((await send(e.url, { method: 'POST' })).status === 500) failed++;
    // Binomial(200, 0.5): outside 60-140 has a probability below 1e-8.
    expect(failed).toBeGreaterThan(60);
    expect(failed).toBeLessThan(140);
  });

  it('refuses a bad rule naming the rule and the field, and changes nothing', async () => {
    const s = await server();
    const e = await kept(s);
    expect((await e.setResponse({ status: 202, rules: [{ name: 'keep', answer: { status: 201 } }] })).status).toBe(200);
    const refused = async (rules: unknown) => {
      const answer = await send(`${s.baseUrl}/api/endpoints/${e.id}/response`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${(JSON.parse((await send(`${s.baseUrl}/api/endpoints`, { method: 'POST', body: '{"kind":"kept"}', headers: { 'content-type': 'application/json' } })).text) as { key: string }).key}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ status: 200, rules }),
      });
      return answer;
    };
    // Another endpoint's key: not found, whatever the body (the key is checked first).
    expect((await refused([])).status).toBe(404);
    const cases: Array<[unknown, RegExp]> = [
      [
        [{ name: 'echo', answer: { body: '{{body}}' } }],
        /rules\.0\.answer\.body \(rule "echo"\): unknown placeholder \{\{body\}\}/,
      ],
      [[{ when: { path: '/a b' }, answer: {} }], /rules\.0\.when\.path: path "\/a b" is not a glob/],
      [[{ when: { path: '/a/***' }, answer: {} }], /rules\.0\.when\.path: .*\*\*\* means nothing/],
      [Array.from({ length: 21 }, () => ({ answer: {} })), /rules: at most 20 rules/],
      [
        [{ name: 'redirect', answer: { status: 302 } }],
        /rules\.0\.answer\.status \(rule "redirect"\): status must be in 200-299 or 400-599/,
      ],
      [[{ answer: {} }, { name: 'switch', answer: { status: 101 } }], /rules\.1\.answer\.status \(rule "switch"\)/],
      [[{ chance: 0, answer: {} }], /rules\.0\.chance: chance must be above 0/],
      [[{ chance: 1.5, answer: {} }], /rules\.0\.chance: chance must be at most 1/],
      [[{ times: 0, answer: {} }], /rules\.0\.times: times must be at least 1/],
      [[{ when: { verb: 'POST' }, answer: {} }], /rules\.0\.when/],
      [
        [{ answer: { headers: [['Set-Cookie', 'a=b']] } }],
        /rules\.0\.answer\.headers\.0: header Set-Cookie may not be configured/,
      ],
      [[{}], /rules\.0\.answer/],
    ];
    for (const [rules, message] of cases) {
      const answer = await e.setResponse({ status: 200, rules });
      expect(answer.status, JSON.stringify(rules)).toBe(400);
      const error = (JSON.parse(answer.text) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('INVALID_RESPONSE_CONFIG');
      expect(error.message).toMatch(message);
    }
    // Nothing changed: the rule set first still answers.
    expect((await send(e.url, { method: 'POST' })).status).toBe(201);
  });

  it('refuses a bad rule on the socket with the same message, and the socket stays', async () => {
    const s = await server();
    const { client } = await SocketClient.create(s.wsUrl);
    cleanups.push(() => client.close());
    client.send({ type: 'set-response', response: { status: 200, rules: [{ name: 'x', times: 0.5, answer: {} }] } });
    const error = await client.next('error');
    expect(error.for).toBe('set-response');
    expect(error.error.message).toMatch(/rules\.0\.times \(rule "x"\): times must be a whole number/);
    client.send({ type: 'set-response', response: { status: 200, rules: [{ answer: { status: 500 } }] } });
    expect((await client.next('response')).response.rules).toEqual([{ answer: { status: 500 } }]);
  });
});
