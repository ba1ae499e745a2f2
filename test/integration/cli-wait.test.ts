import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import type { EndpointInfo } from '../../src/shared/protocol.js';
import { ensureCliBuilt, runCli, startCli, type CliRun } from '../helpers/cli.js';
import { send } from '../helpers/http.js';
import { freePort } from '../helpers/instances.js';
import { SocketClient } from '../helpers/socket-client.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('hookwatch wait', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  beforeAll(() => ensureCliBuilt(), 120_000);

  async function server(): Promise<TestServer> {
    const s = await startServer();
    cleanups.push(s.close);
    return s;
  }
  /** A kept endpoint: it lives without a watcher, so nothing but the CLI touches it. */
  async function keptEndpoint(s: TestServer) {
    const answer = await fetch(`${s.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind":"kept"}',
    });
    const endpoint = (await answer.json()) as EndpointInfo;
    return {
      id: endpoint.id,
      key: endpoint.key,
      url: endpoint.url,
      link: `${s.baseUrl}/#${endpoint.id}.${endpoint.key}`,
    };
  }
  async function stored(s: TestServer, id: string, key: string): Promise<CapturedRequest[]> {
    const answer = await fetch(`${s.baseUrl}/api/endpoints/${id}/requests?afterSeq=0`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return ((await answer.json()) as { requests: CapturedRequest[] }).requests;
  }
  function cli(args: string[], options: Parameters<typeof startCli>[1] = {}): CliRun {
    const run = startCli(args, options);
    cleanups.push(() => run.stop('SIGKILL'));
    return run;
  }
  const json = (body: unknown) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Event': 'push' },
    body: JSON.stringify(body),
  });

  it('prints the first new request that passes every filter, skipping older and non-matching ones, and exits 0', async () => {
    const s = await server();
    const e = await keptEndpoint(s);
    // Matches every filter, but was captured before wait started: not new.
    await send(`${e.url}/github/push`, json({ action: 'opened', count: 3, items: [{ id: 'x' }] }));

    const run = cli([
      'wait',
      e.link,
      '--method',
      'post',
      '--path',
      '/github/*',
      '--header',
      'x-event=push',
      '--json',
      'action=opened',
      '--json',
      'count=3',
      '--json',
      'items.0.id=*',
      '--timeout',
      '20s',
    ]);
    await run.waitFor('stderr', /waiting up to 20 s for a new matching request at endpoint \S+ \(after #1\)/);

    // Each fails exactly one filter.
    await send(`${e.url}/github/push`, {
      ...json({ action: 'opened', count: 3, items: [{ id: 'x' }] }),
      method: 'PUT',
    });
    await send(`${e.url}/gitlab/push`, json({ action: 'opened', count: 3, items: [{ id: 'x' }] }));
    await send(`${e.url}/github/push/deeper`, json({ action: 'opened', count: 3, items: [{ id: 'x' }] }));
    await send(`${e.url}/github/push`, {
      ...json({ action: 'opened', count: 3, items: [{ id: 'x' }] }),
      headers: { 'content-type': 'application/json', 'X-Event': 'ping' },
    });
    await send(`${e.url}/github/push`, json({ action: 'closed', count: 3, items: [{ id: 'x' }] }));
    await send(`${e.url}/github/push`, json({ action: 'opened', count: '3 ', items: [{ id: 'x' }] }));
    await send(`${e.url}/github/push`, json({ action: 'opened', count: 3, items: [] }));
    await send(`${e.url}/github/push`, { ...json({}), body: 'action=opened&count=3' });
    // The one: and one after it, which must not be printed.
    const sentAt = performance.now();
    await send(`${e.url}/github/push`, json({ action: 'opened', count: 3, items: [{ id: 'x' }], n: 'the one' }));
    await send(`${e.url}/github/push`, json({ action: 'opened', count: 3, items: [{ id: 'x' }], n: 'later' }));

    expect(await run.exited).toBe(0);
    expect(performance.now() - sentAt).toBeLessThan(3000);
    const lines = run.stdout().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const printed = JSON.parse(lines[0] as string) as CapturedRequest;
    expect(printed.seq).toBe(10);
    expect(JSON.parse(printed.body)).toMatchObject({ n: 'the one' });
    // The record as the server stored it.
    expect(printed).toEqual((await stored(s, e.id, e.key)).find((request) => request.seq === 10));
    expect(run.stdout() + run.stderr()).not.toContain(e.key);
  });

  it('waits on a live endpoint too, and / matches the bare receiver URL only', async () => {
    const s = await server();
    const { client, welcome } = await SocketClient.create(s.wsUrl);
    cleanups.push(() => client.close());
    const { id, key, url } = welcome.endpoint;
    const run = cli(['wait', '-', '--path', '/'], { stdin: `${s.baseUrl}/#${id}.${key}\n` });
    await run.waitFor('stderr', /waiting up to 60 s/);
    await send(`${url}/not-bare`, { method: 'POST', body: 'no' });
    await send(url, { method: 'POST', body: 'bare' });
    expect(await run.exited).toBe(0);
    expect((JSON.parse(run.stdout()) as CapturedRequest).body).toBe('bare');
  });

  it('exits 1 in about a second with --timeout 1s when nothing matches', async () => {
    const s = await server();
    const e = await keptEndpoint(s);
    const started = performance.now();
    const run = cli(['wait', e.link, '--method', 'DELETE', '--timeout', '1s']);
    await run.waitFor('stderr', /waiting up to 1 s/);
    const waiting = performance.now();
    await send(e.url, { method: 'POST', body: 'not a delete' });
    expect(await run.exited).toBe(1);
    // The second is counted from the start of the process, so it ends less than a second after the wait began.
    expect(performance.now() - started).toBeGreaterThanOrEqual(1000);
    expect(performance.now() - waiting).toBeLessThan(1500);
    expect(run.stdout()).toBe('');
    expect(run.stderr()).toMatch(/^no matching request within 1 s \(1 new request\(s\) did not match\)$/m);
  });

  it('exits 1 with a clear message for an unknown endpoint, a wrong key, and an endpoint deleted while waiting', async () => {
    const s = await server();
    const e = await keptEndpoint(s);
    const unknown = await runCli(['wait', `${s.baseUrl}/#no_such_endpoint.${e.key}`, '--timeout', '5s']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^endpoint not found: it expired, or the share link is wrong$/m);
    expect(unknown.stderr).not.toContain(e.key);
    const wrongKey = await runCli(['wait', `${s.baseUrl}/#${e.id}.WrongKey123`, '--timeout', '5s']);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/endpoint not found: it expired, or the share link is wrong/);

    const run = cli(['wait', e.link, '--timeout', '20s']);
    await run.waitFor('stderr', /waiting up to 20 s/);
    const started = performance.now();
    await fetch(`${s.baseUrl}/api/endpoints/${e.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${e.key}` },
    });
    expect(await run.exited).toBe(1);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(run.stderr()).toMatch(/the endpoint is gone: it expired/);
  });

  it('asks again while the server refuses polls (429 with Retry-After), until the timeout', async () => {
    const s = await startServer({ maxApiAnswerBytesPerAddress: 10 });
    cleanups.push(s.close);
    const e = await keptEndpoint(s);
    const started = performance.now();
    const result = await runCli(['wait', e.link, '--timeout', '2s']);
    expect(result.code).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(2000);
    expect(result.stderr).toMatch(/poll failed \(the server answered 429 RATE_LIMITED: .*\); asking again in 1 s/);
    expect(result.stderr).toMatch(/^no matching request within 2 s \(the server answered no poll\)$/m);
  });

  it('Ctrl-C while waiting exits 1: no request was printed', async () => {
    const s = await server();
    const e = await keptEndpoint(s);
    const run = cli(['wait', e.link]);
    await run.waitFor('stderr', /waiting up to 60 s/);
    expect(await run.stop('SIGINT')).toBe(1);
    expect(run.stdout()).toBe('');
    expect(run.stderr()).toMatch(/^stopped before a matching request arrived$/m);
  });

  it('exits 1 when the server cannot be reached', async () => {
    const port = await freePort();
    const result = await runCli(['wait', `http://127.0.0.1:${port}/#endpoint_1.SecretKey0123`, '--timeout', '5s']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
    expect(result.stderr).not.toContain('SecretKey0123');
  });

  it('exits 2 with a clear message for a bad filter or timeout, before contacting anything', async () => {
    const link = 'http://127.0.0.1:9/#endpoint_1.SecretKey0123';
    const cases: Array<[string[], RegExp]> = [
      [
        ['wait', link, '--header', 'noequals'],
        /hookwatch wait: --header "noequals" has no '=': it takes NAME=VALUE \(NAME=\* for any value\)/,
      ],
      [['wait', link, '--json', 'count'], /hookwatch wait: --json "count" has no '='/],
      [['wait', link, '--json', 'a..b=1'], /--json: "a\.\.b" is not a dotted path/],
      [['wait', link, '--timeout', '5x'], /--timeout takes a duration/],
      [['wait', link, '--timeout', '0'], /--timeout takes a duration/],
      [['wait', link, '--method', 'PO ST'], /--method takes an HTTP method/],
      [['wait', link, '--bogus'], /Unknown option '--bogus'/],
      [['wait'], /missing the share link/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(message);
      expect(result.stderr).toMatch(/Run 'hookwatch wait --help' for usage\./);
      expect(result.stderr + result.stdout).not.toContain('SecretKey0123');
    }
    const help = await runCli(['wait', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: hookwatch wait <share-link>/);
  });
});
