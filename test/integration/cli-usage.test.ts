import { beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, runCli } from '../helpers/cli.js';

const KEY = 'SecretKey0123456789';
const LINK = `http://127.0.0.1:9/#endpoint_1.${KEY}`;

describe('hookwatch usage', () => {
  beforeAll(() => ensureCliBuilt(), 120_000);

  it("prints usage for --help and for each command's --help, exit 0", async () => {
    const main = await runCli(['--help']);
    expect(main.code).toBe(0);
    expect(main.stdout).toMatch(/^Usage: hookwatch <command>/);
    for (const command of ['forward', 'tail', 'create']) {
      const result = await runCli([command, '--help']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^Usage: hookwatch ${command} `));
    }
  });

  it('exits 2 with a clear message for a bad flag, a bad share link, or a missing argument, never echoing the key', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['forward', LINK, '--to', 'http://localhost:1/', '--bogus'], /hookwatch forward: Unknown option '--bogus'/],
      [
        ['forward', 'http://127.0.0.1:9/no-fragment', '--to', 'http://localhost:1/'],
        /the share link has no #<endpointId>\.<key> part/,
      ],
      [
        ['forward', `http://127.0.0.1:9/#endpoint_1.${KEY}-bad`, '--to', 'http://localhost:1/'],
        /the share link's key is missing or malformed/,
      ],
      [
        ['forward', `ftp://127.0.0.1/#endpoint_1.${KEY}`, '--to', 'http://localhost:1/'],
        /the share link must start with http:\/\/ or https:\/\//,
      ],
      [['forward', LINK], /--to <url> is required/],
      [['forward', LINK, '--to', 'localhost:3000'], /--to must start with http:\/\/ or https:\/\//],
      [
        ['forward', LINK, '--to', 'http://localhost:1/', '--concurrency', '0'],
        /--concurrency must be a whole number from 1 to 64/,
      ],
      [['tail', LINK, LINK], /expected one share link, got 2 arguments/],
      [['tail', LINK, '-v', '--json'], /choose one of -v and --json/],
      [['tail'], /missing the share link/],
      [['tail', LINK, '--verify', KEY], /--verify takes <sender>:<secret> or <sender>:env:<NAME>/],
      [['tail', LINK, '--verify', `gitlab:${KEY}`], /the part before ':' is not one of them/],
      [['forward', LINK, '--to', 'http://localhost:1/', '--verify', 'github:'], /--verify github: needs a secret/],
      [
        ['forward', LINK, '--to', 'http://localhost:1/', '--verify', 'stripe:env:HOOKWATCH_TEST_UNSET'],
        /HOOKWATCH_TEST_UNSET is not set or is empty/,
      ],
      [['tail', LINK, '--show-expected'], /--show-expected goes with --verify/],
      [['forward', LINK, '--to', 'http://localhost:1/', '--show-expected'], /--show-expected goes with --verify/],
      [['create', '--server', 'http://127.0.0.1:9/some/path'], /--server takes the server's base URL only/],
      [['launch', LINK], /hookwatch: unknown command 'launch'/],
      [[LINK], /hookwatch: unknown command 'http:\/\/127\.0\.0\.1:9\/#endpoint_1\.<key>'/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(message);
      expect(result.stderr + result.stdout).not.toContain(KEY);
    }
  });

  it('exits 1 when the server cannot be reached at all', async () => {
    const result = await runCli(['tail', LINK]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot join via ws:\/\/127\.0\.0\.1:9\/api\/live: .*ECONNREFUSED/);
    expect(result.stderr).not.toContain(KEY);
  });
});
