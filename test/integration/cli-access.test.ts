import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ensureCliBuilt, runCli, startCli } from '../helpers/cli.js';
import { startServer, type TestServer } from '../helpers/server.js';

const TOKEN = 'cli-token-0123456789abcdef';

describe('the CLI against ACCESS_MODE=token', () => {
  let server: TestServer;
  const home = mkdtempSync(join(tmpdir(), 'hookwatch-cli-access-'));
  // create remembers what it made under XDG_CONFIG_HOME: never the tester's own.
  const env = { XDG_CONFIG_HOME: home, HOOKWATCH_TOKEN: '' };
  beforeAll(async () => {
    await ensureCliBuilt();
    server = await startServer({
      accessMode: 'token',
      accessTokens: loadConfig({ ACCESS_TOKENS: `ci:${TOKEN}` }, []).access.accessTokens,
    });
  }, 120_000);
  afterAll(async () => {
    await server.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('create, tail and wait take --token or HOOKWATCH_TOKEN; without one they fail with a clear message', async () => {
    const refused = await runCli(['create', '--kept', '--server', server.baseUrl], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/401.*--token or HOOKWATCH_TOKEN/);
    const refusedLive = await runCli(['create', '--server', server.baseUrl], { env });
    expect(refusedLive.code).toBe(1);
    expect(refusedLive.stderr).toMatch(/access token/);

    const kept = await runCli(['create', '--kept', '--server', server.baseUrl], {
      env: { ...env, HOOKWATCH_TOKEN: TOKEN },
    });
    expect(kept.code, kept.stderr).toBe(0);
    const live = await runCli(['create', '--token', TOKEN, '--server', server.baseUrl], { env });
    expect(live.code, live.stderr).toBe(0);
    const link = /share link: (\S+)/.exec(kept.stdout)?.[1] as string;
    expect(link).toBeDefined();

    const noToken = await runCli(['tail', link], { env });
    expect(noToken.code).not.toBe(0);
    expect(noToken.stderr).toMatch(/UNAUTHORIZED|access token/);

    const tail = startCli(['tail', link, `--token=${TOKEN}`], { env });
    await tail.waitFor('stderr', /watching endpoint/);
    const receiver = /receiver:\s+(\S+)/.exec(kept.stdout)?.[1] as string;
    expect((await fetch(receiver, { method: 'POST', body: 'hi' })).status).toBe(200);
    await tail.waitFor('stdout', /POST/);
    await tail.stop();

    const waited = await runCli(['wait', link, '--timeout', '1s', '--token', TOKEN], { env });
    expect(waited.stderr).not.toMatch(/401|UNAUTHORIZED/);
    const waitedWithout = await runCli(['wait', link, '--timeout', '1s'], { env });
    expect(waitedWithout.code).not.toBe(0);
    expect(waitedWithout.stderr).toMatch(/401|access token/);
    // The token never shows in what the CLI prints.
    for (const run of [kept, live, waited]) expect(run.stdout + run.stderr).not.toContain(TOKEN);
  });

  it('refuses --token without a value', async () => {
    const result = await runCli(['tail', '--token'], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--token takes the access token/);
  });
});
