// hookwatch create's kept options, list, extend and delete (issue 34, item 3), as real processes
// against a real server, each with a config folder of its own (XDG_CONFIG_HOME).
import { mkdtemp, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, runCli } from '../helpers/cli.js';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

const DAY = 24 * 3600_000;

describe('hookwatch create --name/--lifetime/--keep-secrets, list, extend, delete', () => {
  let server: TestServer;
  const folders: string[] = [];
  beforeAll(async () => {
    await ensureCliBuilt();
    server = await startServer({ logLevel: 'warn' });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  });

  async function configHome(): Promise<{ env: Record<string, string>; file: string }> {
    const folder = await mkdtemp(join(tmpdir(), 'hookwatch-cli-'));
    folders.push(folder);
    return {
      env: { XDG_CONFIG_HOME: folder, HOOKWATCH_SERVER: server.baseUrl },
      file: join(folder, 'hookwatch', 'endpoints.json'),
    };
  }

  it('creates a named kept endpoint (upper case taken as lower) for 7 days with secrets kept, lists it, extends it and deletes it', async () => {
    const { env, file } = await configHome();
    const made = await runCli(['create', '--name', 'Stripe-Dev', '--lifetime', '7d', '--keep-secrets'], { env });
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(new RegExp(`^receiver: +${server.baseUrl}/api/webhook-endpoint/stripe-dev$`, 'm'));
    expect(made.stderr).toContain('Secret header values are stored as received');
    const stored = await server.store.getEndpoint('stripe-dev');
    expect(Date.parse(stored?.expiresAt ?? '') - Date.now()).toBeGreaterThan(7 * DAY - 60_000);
    expect(stored?.redact).toBe(false);
    // The file holds keys: its owner only.
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(file, '..'))).mode & 0o777).toBe(0o700);

    const live = await runCli(['create'], { env });
    expect(live.code).toBe(0);
    const liveId = /webhook-tester\/([A-Za-z0-9_-]+)$/m.exec(live.stdout)?.[1];

    const listed = await runCli(['list'], { env });
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(
        `^stripe-dev +kept +expires in 6 d 23 h \\(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\) +${server.baseUrl}$`,
      ),
    );
    expect(lines[1]).toMatch(new RegExp(`^${liveId} +live +lives while watched +${server.baseUrl}$`));
    // No key unless asked for.
    expect(listed.stdout).not.toContain('#');
    const withLinks = JSON.parse((await runCli(['list', '--json', '--links'], { env })).stdout) as Array<{
      id: string;
      shareLink?: string;
      key?: string;
    }>;
    expect(withLinks[0]).toMatchObject({
      id: 'stripe-dev',
      shareLink: expect.stringMatching(new RegExp(`^${server.baseUrl}/#stripe-dev\\.[A-Za-z0-9]+$`)),
    });
    expect(withLinks[0]?.key).toBeUndefined();

    // Extending to less than is left is refused unless asked for; by name, in any case.
    const shorter = await runCli(['extend', 'STRIPE-DEV', '--lifetime', '2h'], { env });
    expect(shorter.code).toBe(2);
    expect(shorter.stderr).toContain('would end it sooner; add --shorten');
    const extended = await runCli(['extend', 'stripe-dev', '--lifetime', '2h', '--shorten'], { env });
    expect(extended.code).toBe(0);
    expect(extended.stdout).toMatch(/^stripe-dev expires at \d{4}-/);
    expect(Date.parse((await server.store.getEndpoint('stripe-dev'))?.expiresAt ?? '') - Date.now()).toBeLessThan(
      2 * 3600_000 + 5000,
    );
    expect((await runCli(['list'], { env })).stdout).toMatch(/^stripe-dev +kept +expires in 1 h 59 min/m);
    // By share link too.
    const link = withLinks[0]?.shareLink as string;
    expect((await runCli(['extend', link, '--lifetime', '1d'], { env })).code).toBe(0);

    const deleted = await runCli(['delete', 'stripe-dev'], { env });
    expect([deleted.code, deleted.stdout.trim()]).toEqual([0, 'deleted stripe-dev']);
    expect((await send(`${server.baseUrl}/api/webhook-endpoint/stripe-dev`)).status).toBe(404);
    expect((await runCli(['list'], { env })).stdout).not.toContain('stripe-dev');
    // Gone already: said, exit 1.
    const again = await runCli(['delete', link], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('endpoint not found');
  });

  it('says what is wrong with a bad name, lifetime or endpoint, in words, with exit 2', async () => {
    const { env } = await configHome();
    const cases: Array<[string[], RegExp]> = [
      [['create', '--name', '9-lives'], /--name takes 3 to 64 letters, digits and dashes, starting with a letter/],
      [['create', '--name', 'a b'], /--name takes 3 to 64/],
      [['create', '--name', 'x'.repeat(10_000)], /--name takes 3 to 64/],
      [
        ['create', '--lifetime', 'forever'],
        /--lifetime takes a lifetime of at least a minute such as 90m, 2h, 1d or 7d/,
      ],
      [['create', '--lifetime', '30s'], /--lifetime takes/],
      [['create', '--lifetime', '9999999d'], /--lifetime takes/],
      [['extend', 'nothing-here', '--lifetime', '2h'], /no endpoint named "nothing-here"/],
      [['extend', 'x'], /--lifetime is required/],
      [['delete'], /missing the endpoint/],
      [['delete', 'http://localhost:1/#bad'], /share link's key is missing or malformed/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, { env });
      expect([args.join(' ').slice(0, 60), result.code]).toEqual([args.join(' ').slice(0, 60), 2]);
      expect(result.stderr).toMatch(message);
    }
    // The server's own refusal, passed on: over its lifetime cap.
    const capped = await runCli(['create', '--lifetime', '30d'], { env });
    expect(capped.code).toBe(1);
    expect(capped.stderr).toContain('ttlMs must be at most');
  });

  it('refuses a list file it did not write, naming it, and copes with a missing one', async () => {
    const { env, file } = await configHome();
    const empty = await runCli(['list'], { env });
    expect([empty.code, empty.stdout]).toEqual([0, '']);
    expect(empty.stderr).toContain('no endpoints yet');
    await mkdir(join(file, '..'), { recursive: true });
    for (const text of ['not json', '{"endpoints": 3}', 'x'.repeat(2 * 1024 * 1024)]) {
      await writeFile(file, text);
      const result = await runCli(['list'], { env });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(file);
    }
    // Entries it cannot use are left out; the rest stand.
    await writeFile(
      file,
      JSON.stringify({
        endpoints: [
          { id: '../../etc', key: 'k', origin: 'http://x', kind: 'kept', url: 'u' },
          { id: 'ok-one', key: 'abc', origin: server.baseUrl, kind: 'live', url: 'u', createdAt: '' },
          null,
        ],
      }),
    );
    const listed = await runCli(['list'], { env });
    expect(listed.stdout.trim()).toMatch(/^ok-one +live /);
    expect(JSON.parse(await readFile(file, 'utf8'))).toBeTruthy();
  });
});
