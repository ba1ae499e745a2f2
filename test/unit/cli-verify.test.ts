import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { UsageError } from '../../src/cli/command.js';
import {
  checkSignature,
  formatSignatureLine,
  parseVerifyOption,
  shownCheck,
  type SignatureCheck,
} from '../../src/cli/verify.js';
import type { Provider } from '../../src/shared/signatures/index.js';
import { capturedRequest } from '../helpers/captured.js';

const SECRET = "It's a Secret to Everybody";
const BODY = '{"zen":"Keep it logically awesome."}';
const githubSignature = (body: string, secret = SECRET) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

function captured(
  headers: Array<[string, string]>,
  body = BODY,
  extra: Partial<CapturedRequest> = {},
): CapturedRequest {
  return capturedRequest({ url: '/api/webhook-tester/abc/github', subPath: '/github', headers, body, ...extra });
}

function usageMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a UsageError');
}

describe('parseVerifyOption', () => {
  it('reads <sender>:<secret>, keeping colons inside the secret', () => {
    expect(parseVerifyOption('github:a:b:c')).toEqual({ provider: 'github', secret: 'a:b:c', source: 'inline' });
    expect(parseVerifyOption('auto:whsec_x')).toEqual({ provider: 'auto', secret: 'whsec_x', source: 'inline' });
  });

  it('reads <sender>:env:<NAME> from the environment', () => {
    expect(parseVerifyOption('stripe:env:STRIPE_SECRET', { STRIPE_SECRET: 'whsec_abc' })).toEqual({
      provider: 'stripe',
      secret: 'whsec_abc',
      source: 'env',
    });
  });

  it('refuses a bad sender, a missing secret or an unset variable, never quoting the value', () => {
    const cases: Array<[string, RegExp]> = [
      ['TopSecretValue', /--verify takes <sender>:<secret>/],
      ['gitlab:TopSecretValue', /the part before ':' is not one of them/],
      ['github:', /needs a secret after the ':'/],
      ['github:   ', /needs a secret after the ':'/],
      ['github:env:', /needs an environment variable name/],
      ['github:env:MISSING_VAR', /MISSING_VAR is not set or is empty/],
    ];
    for (const [text, pattern] of cases) {
      const message = usageMessage(() => parseVerifyOption(text, {}));
      expect(message).toMatch(pattern);
      expect(message).not.toContain('TopSecretValue');
    }
  });
});

describe('checkSignature and its line', () => {
  it('says valid for a GitHub signature over the stored bytes, also when the sender is guessed', async () => {
    const request = captured([['X-Hub-Signature-256', githubSignature(BODY)]]);
    for (const provider of ['github', 'auto'] as const) {
      const check = await checkSignature({ provider, secret: SECRET, source: 'env' }, request);
      expect(formatSignatureLine(check)).toBe('  signature: valid (github)');
    }
  });

  it('checks a base64-stored body as its bytes', async () => {
    const bytes = Buffer.from([0, 255, 1, 254]);
    const request = captured(
      [['X-Hub-Signature-256', `sha256=${createHmac('sha256', SECRET).update(bytes).digest('hex')}`]],
      bytes.toString('base64'),
      { bodyEncoding: 'base64', isJson: false },
    );
    const check = await checkSignature({ provider: 'github', secret: SECRET, source: 'env' }, request);
    expect(check.ok).toBe(true);
  });

  it('on a mismatch gives the start of the expected signature, the received ones and the reason, never the secret', async () => {
    const received = githubSignature('{"zen":"tampered"}');
    const check = await checkSignature(
      { provider: 'github', secret: SECRET, source: 'env' },
      captured([['X-Hub-Signature-256', received]]),
    );
    const line = formatSignatureLine(check);
    // The whole expected value is a signature of the stored body, good for replaying it: only its first 12 characters show.
    const expected = githubSignature(BODY);
    expect(
      line.startsWith(
        `  signature: mismatch (github): expected ${expected.slice(0, 12)}…, got ${received} — The signature in X-Hub-Signature-256 does not match`,
      ),
    ).toBe(true);
    expect(line).not.toContain(expected);
    expect(line).not.toContain(SECRET);
  });

  it('prints the whole expected signature when asked (--show-expected)', async () => {
    const received = githubSignature('{"zen":"tampered"}');
    const check = await checkSignature(
      { provider: 'github', secret: SECRET, source: 'env' },
      captured([['X-Hub-Signature-256', received]]),
    );
    const line = formatSignatureLine(check, { showExpected: true });
    expect(
      line.startsWith(
        `  signature: mismatch (github): expected ${githubSignature(BODY)}, got ${received} — The signature in X-Hub-Signature-256 does not match`,
      ),
    ).toBe(true);
    expect(line).not.toContain(SECRET);
    expect(formatSignatureLine(check, { showExpected: false })).toBe(formatSignatureLine(check));
  });

  it('shortens the expected value of every sender the same way, and leaves other verdicts alone', () => {
    const mismatch = (provider: Provider, expected: string): SignatureCheck => ({
      provider,
      ok: false,
      reason: 'mismatch',
      message: 'm',
      expected,
      received: ['r'],
    });
    expect(formatSignatureLine(mismatch('stripe', `v1=${'ab'.repeat(32)}`))).toBe(
      '  signature: mismatch (stripe): expected v1=ababababa…, got r — m',
    );
    expect(formatSignatureLine(mismatch('standard-webhooks', `v1,${'A'.repeat(44)}`))).toBe(
      '  signature: mismatch (standard-webhooks): expected v1,AAAAAAAAA…, got r — m',
    );
    expect(formatSignatureLine(mismatch('shopify', 'short'))).toBe(
      '  signature: mismatch (shopify): expected short, got r — m',
    );
    expect(shownCheck(mismatch('slack', `v0=${'c'.repeat(64)}`))).toEqual(mismatch('slack', 'v0=ccccccccc…'));
    expect(shownCheck(mismatch('slack', `v0=${'c'.repeat(64)}`), { showExpected: true })).toEqual(
      mismatch('slack', `v0=${'c'.repeat(64)}`),
    );
    const valid: SignatureCheck = { provider: 'github', ok: true, reason: 'valid', message: 'm' };
    expect(shownCheck(valid)).toBe(valid);
  });

  it('judges a signed timestamp at the capture time, not now', async () => {
    const receivedAt = '2020-05-01T12:00:00.000Z';
    const seconds = Date.parse(receivedAt) / 1000;
    const secret = 'whsec_test';
    const signature = createHmac('sha256', secret).update(`${seconds}.${BODY}`).digest('hex');
    const request = captured([['Stripe-Signature', `t=${seconds},v1=${signature}`]], BODY, { receivedAt });
    expect(formatSignatureLine(await checkSignature({ provider: 'stripe', secret, source: 'env' }, request))).toBe(
      '  signature: valid (stripe)',
    );
  });

  it('names the reason for anything else, and escapes what the headers carried', async () => {
    const missing = await checkSignature({ provider: 'github', secret: SECRET, source: 'env' }, captured([]));
    expect(formatSignatureLine(missing)).toMatch(
      /^ {2}signature: missing-header \(github\): There is no X-Hub-Signature-256 header/,
    );
    const malformed = await checkSignature(
      { provider: 'github', secret: SECRET, source: 'env' },
      captured([['X-Hub-Signature-256', 'sha1=\u001b[31mred']]),
    );
    const line = formatSignatureLine(malformed);
    expect(line).toMatch(/^ {2}signature: malformed-header \(github\)/);
    expect(line).not.toContain('\u001b');
    const truncated = await checkSignature(
      { provider: 'github', secret: SECRET, source: 'env' },
      captured([['X-Hub-Signature-256', githubSignature(BODY)]], BODY, { truncated: true, size: 10_000 }),
    );
    expect(formatSignatureLine(truncated)).toMatch(/^ {2}signature: truncated \(github\): .*cannot be checked/);
  });

  it('with auto, says when no sender can be guessed', async () => {
    const check = await checkSignature(
      { provider: 'auto', secret: SECRET, source: 'env' },
      captured([['Content-Type', 'application/json']]),
    );
    expect(formatSignatureLine(check)).toBe(
      '  signature: not checked: no sender recognised from the headers; name one with --verify <sender>:…',
    );
  });
});
