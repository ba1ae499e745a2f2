import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, runCli } from '../helpers/cli.js';
import { send } from '../helpers/http.js';
import { SocketClient } from '../helpers/socket-client.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('hookwatch create', () => {
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

  it('prints a receiver URL that accepts requests and a share link that joins the endpoint', async () => {
    const s = await server();
    const result = await runCli(['create', '--server', s.baseUrl]);
    expect(result.code).toBe(0);
    const receiver = /^receiver: +(\S+)$/m.exec(result.stdout)?.[1];
    const link = /^share link: +(\S+)$/m.exec(result.stdout)?.[1];
    expect(receiver).toMatch(new RegExp(`^${s.baseUrl}/api/webhook-tester/[A-Za-z0-9_-]+$`));
    expect(link).toMatch(new RegExp(`^${s.baseUrl}/#[A-Za-z0-9_-]+\\.[A-Za-z0-9]+$`));
    expect(result.stderr).toMatch(/lives only while something watches it .* plus 30 s after the last watcher leaves/);

    // Within the grace the endpoint still takes requests, and the link's key joins it.
    expect((await send(receiver!, { method: 'POST', body: 'hi' })).status).toBe(200);
    const [id, key] = new URL(link!).hash.slice(1).split('.') as [string, string];
    const { client, welcome } = await SocketClient.join(s.wsUrl, id, key);
    cleanups.push(() => client.close());
    expect(welcome.endpoint.url).toBe(receiver);
    expect(welcome.backlog).toBe(1);
  });

  it('--kept creates a kept endpoint that takes requests with no watcher, and a link that joins it', async () => {
    const s = await server();
    const result = await runCli(['create', '--kept', '--server', s.baseUrl]);
    expect(result.code).toBe(0);
    const receiver = /^receiver: +(\S+)$/m.exec(result.stdout)?.[1];
    const link = /^share link: +(\S+)$/m.exec(result.stdout)?.[1];
    expect(receiver).toMatch(new RegExp(`^${s.baseUrl}/api/webhook-endpoint/[A-Za-z0-9_-]+$`));
    expect(result.stderr).toMatch(/kept endpoint lives until \d{4}-\d\d-\d\dT/);
    expect((await send(receiver!, { method: 'POST', body: 'kept' })).status).toBe(200);
    const [id, key] = new URL(link!).hash.slice(1).split('.') as [string, string];
    const { client, welcome } = await SocketClient.join(s.wsUrl, id, key);
    cleanups.push(() => client.close());
    expect(welcome.endpoint.kind).toBe('kept');
    expect(welcome.backlog).toBe(1);
  });

  it('takes the server from HOOKWATCH_SERVER when --server is not given; an explicit --server wins', async () => {
    const s = await server();
    const fromEnv = await runCli(['create'], { env: { HOOKWATCH_SERVER: s.baseUrl } });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(fromEnv.stdout).toMatch(new RegExp(`^share link: +${s.baseUrl}/#`, 'm'));

    const kept = await runCli(['create', '--kept'], { env: { HOOKWATCH_SERVER: s.baseUrl } });
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stdout).toMatch(new RegExp(`^receiver: +${s.baseUrl}/api/webhook-endpoint/`, 'm'));

    const explicit = await runCli(['create', '--server', s.baseUrl], {
      env: { HOOKWATCH_SERVER: 'http://127.0.0.1:9' },
    });
    expect(explicit.code, explicit.stderr).toBe(0);
    expect(explicit.stdout).toMatch(new RegExp(`^share link: +${s.baseUrl}/#`, 'm'));
  });

  it('defaults to http://localhost:8080 without --server or HOOKWATCH_SERVER', async () => {
    // Whatever listens on 8080 here (or nothing), the command goes there rather than exiting 2.
    const result = await runCli(['create'], { env: { HOOKWATCH_SERVER: '' } });
    expect(result.stderr).not.toMatch(/--server <base-url> is required/);
    if (result.code === 0) expect(result.stdout).toMatch(/^share link: +http:\/\/localhost:8080\/#/m);
    else
      expect({ code: result.code, stderr: result.stderr }).toEqual({
        code: 1,
        stderr: expect.stringMatching(/could not create an endpoint at http:\/\/localhost:8080: /),
      });
  });

  it('exits 2 when HOOKWATCH_SERVER is not a base URL, naming the variable', async () => {
    const result = await runCli(['create'], { env: { HOOKWATCH_SERVER: 'http://127.0.0.1:9/some/path' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/HOOKWATCH_SERVER takes the server's base URL only/);
  });

  it('exits 1 with the reason when the server cannot be reached', async () => {
    const s = await server();
    const url = s.baseUrl;
    await s.close();
    cleanups.pop();
    const result = await runCli(['create', '--server', url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/could not create an endpoint at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
  });
});
