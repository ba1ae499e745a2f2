import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AccessTokensError, createAccess } from '../../src/access/access.js';
import { MAX_ACCESS_TOKENS, parseAccessTokens, userOfToken } from '../../src/access/access-tokens.js';
import { defaultConfig, loadConfig } from '../../src/config.js';

const TOKEN = 'a-long-enough-token-0123';
const problems = (env: Record<string, string>): string => {
  try {
    loadConfig(env, []);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('access settings', () => {
  it('defaults to open, with the user header lower-cased', () => {
    const config = loadConfig({ ACCESS_USER_HEADER: 'Remote-Email' }, []);
    expect(config.access.accessMode).toBe('open');
    expect(config.access.accessUserHeader).toBe('remote-email');
  });

  it('refuses a mode that has nothing to judge callers by, naming the settings', () => {
    expect(problems({ ACCESS_MODE: 'token' })).toMatch(/ACCESS_MODE=token needs ACCESS_TOKENS or ACCESS_TOKENS_FILE/);
    expect(problems({ ACCESS_MODE: 'proxy' })).toMatch(/ACCESS_MODE=proxy needs TRUST_PROXY/);
    expect(problems({ ACCESS_MODE: 'proxy', TRUST_PROXY: '10.0.0.0/8' })).toBe('');
    expect(problems({ ACCESS_MODE: 'token', ACCESS_TOKENS_FILE: '/etc/tokens' })).toBe('');
    expect(problems({ ACCESS_MODE: 'private' })).toMatch(/ACCESS_MODE="private": expected open, token or proxy/);
    expect(problems({ ACCESS_MODE: 'proxy', TRUST_PROXY: '1.2.3.4', ACCESS_USER_HEADER: 'bad header' })).toMatch(
      /ACCESS_USER_HEADER.*expected a header name/,
    );
  });

  it('never echoes a bad token list, even to say what is wrong with it', () => {
    for (const value of ['short', `alice:${TOKEN},bob:tiny`, `bad name:${TOKEN}`, ',,,', `${'x'.repeat(513)}`]) {
      const message = problems({ ACCESS_MODE: 'token', ACCESS_TOKENS: value });
      expect(message, value).toMatch(/ACCESS_TOKENS=\(hidden\)/);
      if (value.length > 3) expect(message).not.toContain(value);
    }
    expect(problems({ ACCESS_MODE: 'token', ACCESS_TOKENS: `alice:${TOKEN},bob:tiny` })).toMatch(/entry 2/);
  });

  it('parses names, bare tokens, comments and blank lines, holding hashes only', () => {
    const tokens = parseAccessTokens(`# team\n\nalice:${TOKEN}\n ${TOKEN}-2 , ci.bot@x:${TOKEN}-3\n`);
    if (typeof tokens === 'string') throw new Error(tokens);
    expect(tokens.map((token) => token.user)).toEqual([
      'alice',
      expect.stringMatching(/^token-[0-9a-f]{16}$/) as unknown,
      'ci.bot@x',
    ]);
    expect(JSON.stringify(tokens)).not.toContain(TOKEN);
    expect(userOfToken(tokens, TOKEN)).toBe('alice');
    expect(userOfToken(tokens, `${TOKEN}-3`)).toBe('ci.bot@x');
    expect(userOfToken(tokens, `${TOKEN}-4`)).toBeUndefined();
    expect(userOfToken(tokens, '')).toBeUndefined();
    expect(parseAccessTokens('')).toEqual([]);
  });

  it('refuses more tokens than it will compare, and tokens too long, without hanging', () => {
    const many = Array.from({ length: MAX_ACCESS_TOKENS + 1 }, (_, i) => `${TOKEN}-${i}`).join('\n');
    expect(parseAccessTokens(many)).toMatch(/more than 10000 tokens/);
    expect(parseAccessTokens('x'.repeat(10 * 1024 * 1024))).toMatch(/entry 1/);
  });
});

describe('createAccess', () => {
  const tokenAccess = (file: string) =>
    createAccess(defaultConfig({ accessMode: 'token', accessTokensFile: file }).access, false);
  const dir = mkdtempSync(join(tmpdir(), 'hookwatch-access-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('fails at start on a missing or empty token file, and keeps its tokens when a reload finds a bad one', () => {
    const file = join(dir, 'tokens');
    expect(() => tokenAccess(file)).toThrow(AccessTokensError);
    writeFileSync(file, '# nobody yet\n');
    expect(() => tokenAccess(file)).toThrow(/nobody could sign in/);
    writeFileSync(file, `alice:${TOKEN}\n`);
    const access = tokenAccess(file);
    expect(access.userOfToken(TOKEN)).toBe('alice');
    writeFileSync(file, 'alice:short\n');
    expect(() => access.reload()).toThrow(/entry 1/);
    expect(access.userOfToken(TOKEN)).toBe('alice');
    writeFileSync(file, '');
    expect(access.reload()).toBe(0);
    expect(access.userOfToken(TOKEN)).toBeUndefined();
  });

  it('refuses a token file past 8 MiB without reading it', () => {
    const file = join(dir, 'huge');
    writeFileSync(file, Buffer.alloc(8 * 1024 * 1024 + 1, 'a'));
    expect(() => tokenAccess(file)).toThrow(/larger than 8388608 bytes/);
  });

  it('believes the user header only from a trusted peer, once, and not when it holds control characters', () => {
    const access = createAccess(defaultConfig({ accessMode: 'proxy' }).access, ['10.0.0.0/8']);
    // As node:http hands them over: a repeated custom header joined into one value, every line kept in rawHeaders.
    const from = (remoteAddress: string, value: string | string[]) => ({
      headers: { 'x-forwarded-email': Array.isArray(value) ? value.join(', ') : value },
      rawHeaders: (Array.isArray(value) ? value : [value]).flatMap((line) => ['X-Forwarded-Email', line]),
      socket: { remoteAddress },
    });
    expect(access.userOf(from('10.1.2.3', 'ada@example.com'))).toBe('ada@example.com');
    for (const [address, value] of [
      ['192.168.1.1', 'ada@example.com'],
      ['10.1.2.3', ['a@x', 'b@x']],
      ['10.1.2.3', 'a\tb'],
      ['10.1.2.3', ''],
      ['10.1.2.3', 'x'.repeat(257)],
    ] as const) {
      expect(
        () => access.userOf(from(address, value as string | string[])),
        `${address} ${JSON.stringify(value)}`,
      ).toThrow(/Sign in first/);
    }
  });
});
