import type { CapturedRequest } from '../shared/schemas/captured-request.js';
import { detectProvider, PROVIDERS, verifySignature, type Provider, type Verdict } from '../shared/signatures/index.js';
import { UsageError, type CommandContext } from './command.js';
import { toPrintable } from './format.js';

/** What `--verify` asked for: a sender (or `auto`: guess it per request) and its secret. */
export interface VerifySpec {
  provider: Provider | 'auto';
  secret: string;
  /** Where the secret came from; an inline one is worth a warning (`ps` shows it). */
  source: 'inline' | 'env';
}

/** A request whose sender `auto` could not guess: nothing was computed. */
export interface UnknownSender {
  ok: false;
  reason: 'unknown-sender';
  message: string;
}

export type SignatureCheck = Verdict | UnknownSender;

const SENDERS = [...PROVIDERS, 'auto'] as const;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Reads `--verify <sender>:<secret>` or `<sender>:env:<NAME>`. Error messages never quote the
 * value: a mistyped one may be all secret (no colon at all), and messages end up in terminals and logs.
 */
export function parseVerifyOption(text: string, env: NodeJS.ProcessEnv = process.env): VerifySpec {
  const colon = text.indexOf(':');
  const expected = `--verify takes <sender>:<secret> or <sender>:env:<NAME>, with <sender> one of ${SENDERS.join(', ')}`;
  if (colon === -1) throw new UsageError(expected);
  const sender = text.slice(0, colon);
  if (!(SENDERS as readonly string[]).includes(sender))
    throw new UsageError(`${expected}; the part before ':' is not one of them`);
  const provider = sender as VerifySpec['provider'];
  const rest = text.slice(colon + 1);
  if (rest.startsWith('env:')) {
    const name = rest.slice('env:'.length);
    if (!ENV_NAME.test(name))
      throw new UsageError('--verify <sender>:env:<NAME> needs an environment variable name (letters, digits, _)');
    const secret = env[name];
    if (secret === undefined || secret.trim() === '')
      throw new UsageError(
        `--verify: the environment variable ${name} is not set or is empty, so there is no secret to check with`,
      );
    return { provider, secret, source: 'env' };
  }
  if (rest.trim() === '')
    throw new UsageError(
      `--verify ${sender}: needs a secret after the ':' (or env:<NAME> to read it from the environment)`,
    );
  return { provider, secret: rest, source: 'inline' };
}

/**
 * Checks a captured request's signature over its stored bytes. "Now" is the capture time, so a
 * signed timestamp is judged as it was when the request arrived, not when it is replayed.
 */
export async function checkSignature(spec: VerifySpec, request: CapturedRequest): Promise<SignatureCheck> {
  const provider = spec.provider === 'auto' ? detectProvider(request.headers) : spec.provider;
  if (provider === undefined) {
    return {
      ok: false,
      reason: 'unknown-sender',
      message: 'no sender recognised from the headers; name one with --verify <sender>:…',
    };
  }
  const body = new Uint8Array(Buffer.from(request.body, request.bodyEncoding === 'base64' ? 'base64' : 'utf8'));
  return verifySignature(provider, { headers: request.headers, body, truncated: request.truncated }, spec.secret, {
    nowMs: Date.parse(request.receivedAt),
  });
}

/** How a verdict is shown: the expected signature in full only when asked (`--show-expected`). */
export interface SignatureDisplay {
  showExpected?: boolean;
}

/** Characters of the expected signature shown by default: enough to tell it from the received one. */
const EXPECTED_PREFIX = 12;

/**
 * A computed signature as it is shown: its first EXPECTED_PREFIX characters and "…" unless the
 * whole was asked for. The whole value is a valid signature of the stored body (for GitHub and
 * Shopify with no time limit), so anyone who reads it can replay that body to the reader's app;
 * the start is enough to compare by eye.
 */
function shownExpected(expected: string, display: SignatureDisplay): string {
  return display.showExpected || expected.length <= EXPECTED_PREFIX
    ? expected
    : `${expected.slice(0, EXPECTED_PREFIX)}…`;
}

/** The verdict as it is shown (for `--json`): a mismatch's `expected` cut as on the terminal. */
export function shownCheck(check: SignatureCheck, display: SignatureDisplay = {}): SignatureCheck {
  return check.reason === 'unknown-sender' || check.expected === undefined
    ? check
    : { ...check, expected: shownExpected(check.expected, display) };
}

/**
 * `  signature: valid (github)`, or the reason with the verdict's own message. The verdict never
 * holds the secret; what it quotes from the request's headers is escaped like any captured data.
 */
export function formatSignatureLine(check: SignatureCheck, display: SignatureDisplay = {}): string {
  if (check.reason === 'unknown-sender') return `  signature: not checked: ${check.message}`;
  if (check.ok) return `  signature: valid (${check.provider})`;
  if (check.reason === 'mismatch') {
    const received = (check.received ?? []).join(' or ');
    return toPrintable(
      `  signature: mismatch (${check.provider}): expected ${check.expected === undefined ? '?' : shownExpected(check.expected, display)}, got ${received} — ${check.message}`,
    );
  }
  return toPrintable(`  signature: ${check.reason} (${check.provider}): ${check.message}`);
}

/** A secret on the command line is in every user's `ps`: say so, and how to avoid it. */
export function warnInlineSecret(context: CommandContext): void {
  context.err(
    'note: a secret given on the command line is visible to other users of this machine (ps); --verify <sender>:env:<NAME> reads it from an environment variable instead',
  );
}
