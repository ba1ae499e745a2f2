import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  detectProvider,
  PROVIDERS,
  verifySignature,
  type Provider,
  type SignedRequest,
  type Verdict,
} from '../../src/shared/signatures/index.js';

type Headers = SignedRequest['headers'];

const encoder = new TextEncoder();

function makeRequest(headers: Headers, body: string | Uint8Array, truncated = false): SignedRequest {
  return { headers, body: typeof body === 'string' ? encoder.encode(body) : body, truncated };
}

/** Independent of the module: node:crypto, which the module itself cannot use. */
function hmacHex(key: string | Buffer, content: string | Buffer): string {
  return createHmac('sha256', key).update(content).digest('hex');
}

function hmacBase64(key: string | Buffer, content: string | Buffer): string {
  return createHmac('sha256', key).update(content).digest('base64');
}

const NOW_SECONDS = 1_700_000_000;
const NOW_MS = NOW_SECONDS * 1000;

// --- Published vectors -------------------------------------------------------------------------

// GitHub, "Testing the webhook payload validation":
// https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
const GITHUB_SECRET = "It's a Secret to Everybody";
const GITHUB_BODY = 'Hello, World!';
const GITHUB_SIGNATURE = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

// Standard Webhooks reference library test "sign function works":
// https://github.com/standard-webhooks/standard-webhooks/blob/main/libraries/javascript/src/webhook.test.ts
const SW_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SW_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const SW_TIMESTAMP = 1614265330;
const SW_BODY = '{"test": 2432232314}';
const SW_SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

// Slack's worked example: https://api.slack.com/authentication/verifying-requests-from-slack
// (now https://docs.slack.dev/authentication/verifying-requests-from-slack).
const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const SLACK_TIMESTAMP = 1531420618;
const SLACK_BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const SLACK_SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

function githubRequest(
  signature = GITHUB_SIGNATURE,
  body: string | Uint8Array = GITHUB_BODY,
  truncated = false,
): SignedRequest {
  return makeRequest(
    [
      ['X-GitHub-Event', 'push'],
      ['X-Hub-Signature-256', signature],
    ],
    body,
    truncated,
  );
}

function swHeaders(signature = SW_SIGNATURE, prefix = 'webhook-', timestamp = String(SW_TIMESTAMP)): Headers {
  return [
    [`${prefix}id`, SW_ID],
    [`${prefix}timestamp`, timestamp],
    [`${prefix}signature`, signature],
  ];
}

function slackRequest(signature = SLACK_SIGNATURE, timestamp = String(SLACK_TIMESTAMP)): SignedRequest {
  return makeRequest(
    [
      ['X-Slack-Request-Timestamp', timestamp],
      ['X-Slack-Signature', signature],
    ],
    SLACK_BODY,
  );
}

// --- Stripe and Shopify publish no vector: valid cases come from node:crypto -----------------------

const STRIPE_SECRET = 'whsec_test_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH';
const STRIPE_BODY = '{"id":"evt_1","object":"event","type":"charge.succeeded"}';

function stripeSignature(timestamp: number, secret: string | Buffer = STRIPE_SECRET, body = STRIPE_BODY): string {
  return hmacHex(secret, `${timestamp}.${body}`);
}

function stripeRequest(header: string): SignedRequest {
  return makeRequest([['Stripe-Signature', header]], STRIPE_BODY);
}

const SHOPIFY_SECRET = 'shpss_0123456789abcdef0123456789abcdef';
const SHOPIFY_BODY = '{"id":820982911946154508,"email":"jon@example.com"}';

function shopifyRequest(signature: string): SignedRequest {
  return makeRequest(
    [
      ['X-Shopify-Topic', 'orders/create'],
      ['X-Shopify-Hmac-Sha256', signature],
    ],
    SHOPIFY_BODY,
  );
}

describe('published vectors', () => {
  it("accepts GitHub's documented example and shows it as GitHub writes it", async () => {
    const verdict = await verifySignature('github', githubRequest(), GITHUB_SECRET);
    expect(verdict).toMatchObject({
      provider: 'github',
      ok: true,
      reason: 'valid',
      signatureHeader: 'X-Hub-Signature-256',
    });
  });

  it('computes the GitHub vector exactly when the body differs by one byte', async () => {
    const verdict = await verifySignature('github', githubRequest(GITHUB_SIGNATURE, 'Hello, World?'), GITHUB_SECRET);
    expect(verdict.reason).toBe('mismatch');
    expect(verdict.received).toEqual([GITHUB_SIGNATURE]);
    expect(verdict.expected).toBe(`sha256=${hmacHex(GITHUB_SECRET, 'Hello, World?')}`);
  });

  it('accepts the Standard Webhooks reference vector, under webhook- and svix- headers', async () => {
    const nowMs = SW_TIMESTAMP * 1000;
    for (const prefix of ['webhook-', 'svix-']) {
      const verdict = await verifySignature(
        'standard-webhooks',
        makeRequest(swHeaders(SW_SIGNATURE, prefix), SW_BODY),
        SW_SECRET,
        { nowMs },
      );
      expect(verdict, prefix).toMatchObject({ ok: true, reason: 'valid', signatureHeader: `${prefix}signature` });
    }
  });

  it('finds the right Standard Webhooks signature among several (secret rotation), ignoring other versions', async () => {
    const decoy = 'Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=';
    const list = [`v1,${decoy}`, `v2,${decoy}`, SW_SIGNATURE, `v1a,${decoy}`].join(' ');
    const verdict = await verifySignature('standard-webhooks', makeRequest(swHeaders(list), SW_BODY), SW_SECRET, {
      nowMs: SW_TIMESTAMP * 1000,
    });
    expect(verdict.reason).toBe('valid');
  });

  it('reports the Standard Webhooks signature it computed, as v1,<base64>, when the body changed', async () => {
    const verdict = await verifySignature('standard-webhooks', makeRequest(swHeaders(), `${SW_BODY} `), SW_SECRET, {
      nowMs: SW_TIMESTAMP * 1000,
    });
    expect(verdict.reason).toBe('mismatch');
    const key = Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64');
    expect(verdict.expected).toBe(`v1,${hmacBase64(key, `${SW_ID}.${SW_TIMESTAMP}.${SW_BODY} `)}`);
    expect(verdict.received).toEqual([SW_SIGNATURE]);
  });

  it("accepts Slack's documented example", async () => {
    const verdict = await verifySignature('slack', slackRequest(), SLACK_SECRET, { nowMs: SLACK_TIMESTAMP * 1000 });
    expect(verdict).toMatchObject({ ok: true, reason: 'valid' });
  });
});

describe('independently computed valid cases', () => {
  it('Stripe: uses the whsec_ secret as-is (not base64-decoded), and tries every v1', async () => {
    const good = stripeSignature(NOW_SECONDS);
    const header = `t=${NOW_SECONDS},v1=${'0'.repeat(64)},v1=${good},v0=${'1'.repeat(64)}`;
    const verdict = await verifySignature('stripe', stripeRequest(header), STRIPE_SECRET, { nowMs: NOW_MS });
    expect(verdict).toMatchObject({ ok: true, reason: 'valid', signatureHeader: 'Stripe-Signature' });
  });

  it('Stripe: a signature keyed with the base64-decoded secret (the Standard Webhooks way) does not pass', async () => {
    const decodedKey = Buffer.from(STRIPE_SECRET.slice('whsec_'.length), 'base64');
    const header = `t=${NOW_SECONDS},v1=${stripeSignature(NOW_SECONDS, decodedKey)}`;
    const verdict = await verifySignature('stripe', stripeRequest(header), STRIPE_SECRET, { nowMs: NOW_MS });
    expect(verdict.reason).toBe('mismatch');
    expect(verdict.expected).toBe(`v1=${stripeSignature(NOW_SECONDS)}`);
  });

  it('Shopify: base64 HMAC of the raw body', async () => {
    const verdict = await verifySignature(
      'shopify',
      shopifyRequest(hmacBase64(SHOPIFY_SECRET, SHOPIFY_BODY)),
      SHOPIFY_SECRET,
    );
    expect(verdict).toMatchObject({ ok: true, reason: 'valid', signatureHeader: 'X-Shopify-Hmac-Sha256' });
  });

  it('Shopify: on a changed body, reports the computed signature in base64 as Shopify writes it', async () => {
    const request = makeRequest(
      [['X-Shopify-Hmac-Sha256', hmacBase64(SHOPIFY_SECRET, SHOPIFY_BODY)]],
      `${SHOPIFY_BODY}\n`,
    );
    const verdict = await verifySignature('shopify', request, SHOPIFY_SECRET);
    expect(verdict.reason).toBe('mismatch');
    expect(verdict.expected).toBe(hmacBase64(SHOPIFY_SECRET, `${SHOPIFY_BODY}\n`));
  });

  it('GitHub: signs the raw bytes, including ones that are not UTF-8', async () => {
    const body = Uint8Array.from([0x7b, 0xff, 0xfe, 0x00, 0xc3, 0x7d]);
    const signature = `sha256=${hmacHex('s3cret', Buffer.from(body))}`;
    expect((await verifySignature('github', githubRequest(signature, body), 's3cret')).reason).toBe('valid');
  });

  it('matches header names case-insensitively and checks every repeat of a signature header', async () => {
    const headers: Headers = [
      ['x-hub-signature-256', `sha256=${'a'.repeat(64)}`],
      ['X-HUB-SIGNATURE-256', GITHUB_SIGNATURE],
    ];
    const verdict = await verifySignature('github', makeRequest(headers, GITHUB_BODY), GITHUB_SECRET);
    expect(verdict).toMatchObject({ ok: true, signatureHeader: 'x-hub-signature-256' });
  });

  it('Slack: recomputes from the timestamp header text as sent', async () => {
    const timestamp = String(NOW_SECONDS);
    const signature = `v0=${hmacHex('slack-secret', `v0:${timestamp}:${SLACK_BODY}`)}`;
    expect(
      (await verifySignature('slack', slackRequest(signature, timestamp), 'slack-secret', { nowMs: NOW_MS })).reason,
    ).toBe('valid');
  });
});

describe('every failure has a reason', () => {
  it('truncated: the stored body was cut, even when the signature would otherwise be checked', async () => {
    const verdict = await verifySignature('github', githubRequest(GITHUB_SIGNATURE, GITHUB_BODY, true), GITHUB_SECRET);
    expect(verdict).toMatchObject({ ok: false, reason: 'truncated' });
    expect(verdict.message).toContain('MAX_BODY_BYTES');
  });

  it('truncated comes before a missing header', async () => {
    const verdict = await verifySignature('stripe', makeRequest([], 'x', true), STRIPE_SECRET);
    expect(verdict.reason).toBe('truncated');
  });

  it('missing-header: GitHub without a secret configured', async () => {
    const verdict = await verifySignature(
      'github',
      makeRequest([['X-GitHub-Event', 'push']], GITHUB_BODY),
      GITHUB_SECRET,
    );
    expect(verdict).toMatchObject({ ok: false, reason: 'missing-header' });
    expect(verdict.message).toContain('X-Hub-Signature-256');
    expect(verdict.message).toContain('secret');
  });

  it('missing-header: Slack without its timestamp, Standard Webhooks without its id', async () => {
    const slack = makeRequest([['X-Slack-Signature', SLACK_SIGNATURE]], SLACK_BODY);
    const slackVerdict = await verifySignature('slack', slack, SLACK_SECRET, { nowMs: SLACK_TIMESTAMP * 1000 });
    expect(slackVerdict.reason).toBe('missing-header');
    expect(slackVerdict.message).toContain('X-Slack-Request-Timestamp');

    const sw = makeRequest(
      swHeaders().filter(([name]) => name !== 'webhook-id'),
      SW_BODY,
    );
    const swVerdict = await verifySignature('standard-webhooks', sw, SW_SECRET, { nowMs: SW_TIMESTAMP * 1000 });
    expect(swVerdict.reason).toBe('missing-header');
    expect(swVerdict.message).toContain('webhook-id');
  });

  it('missing-header comes before a bad secret', async () => {
    expect((await verifySignature('shopify', makeRequest([], SHOPIFY_BODY), '')).reason).toBe('missing-header');
  });

  it('malformed-header: GitHub signature not in sha256=<hex> form, with what was received', async () => {
    const verdict = await verifySignature('github', githubRequest('sha1=abc'), GITHUB_SECRET);
    expect(verdict).toMatchObject({ ok: false, reason: 'malformed-header', received: ['sha1=abc'] });
    // The right digest without its "sha256=" is still not what GitHub writes.
    const bare = GITHUB_SIGNATURE.slice('sha256='.length);
    expect((await verifySignature('github', githubRequest(bare), GITHUB_SECRET)).reason).toBe('malformed-header');
  });

  it('malformed-header: Stripe without t=, and with only the test-mode v0', async () => {
    const noTimestamp = await verifySignature(
      'stripe',
      stripeRequest(`v1=${stripeSignature(NOW_SECONDS)}`),
      STRIPE_SECRET,
      { nowMs: NOW_MS },
    );
    expect(noTimestamp.reason).toBe('malformed-header');
    expect(noTimestamp.message).toContain('t=');

    const onlyV0 = await verifySignature(
      'stripe',
      stripeRequest(`t=${NOW_SECONDS},v0=${'1'.repeat(64)}`),
      STRIPE_SECRET,
      { nowMs: NOW_MS },
    );
    expect(onlyV0.reason).toBe('malformed-header');
    expect(onlyV0.message).toContain('v0=');
  });

  it('malformed-header: a cut Standard Webhooks signature, a hex Shopify one, a non-numeric or conflicting timestamp', async () => {
    const cut = await verifySignature(
      'standard-webhooks',
      makeRequest(swHeaders(SW_SIGNATURE.slice(0, 8)), SW_BODY),
      SW_SECRET,
      { nowMs: SW_TIMESTAMP * 1000 },
    );
    expect(cut).toMatchObject({ reason: 'malformed-header', received: [SW_SIGNATURE.slice(0, 8)] });

    const hex = await verifySignature('shopify', shopifyRequest(hmacHex(SHOPIFY_SECRET, SHOPIFY_BODY)), SHOPIFY_SECRET);
    expect(hex.reason).toBe('malformed-header');
    expect(hex.message).toContain('base64');

    const words = await verifySignature('slack', slackRequest(SLACK_SIGNATURE, 'yesterday'), SLACK_SECRET, {
      nowMs: SLACK_TIMESTAMP * 1000,
    });
    expect(words.reason).toBe('malformed-header');

    const twice = makeRequest(
      [
        ['X-Slack-Request-Timestamp', String(SLACK_TIMESTAMP)],
        ['X-Slack-Request-Timestamp', String(SLACK_TIMESTAMP + 1)],
        ['X-Slack-Signature', SLACK_SIGNATURE],
      ],
      SLACK_BODY,
    );
    expect((await verifySignature('slack', twice, SLACK_SECRET, { nowMs: SLACK_TIMESTAMP * 1000 })).reason).toBe(
      'malformed-header',
    );
  });

  it('bad-secret: a Standard Webhooks secret without whsec_, or with broken base64', async () => {
    const request = makeRequest(swHeaders(), SW_BODY);
    const options = { nowMs: SW_TIMESTAMP * 1000 };
    const bare = await verifySignature('standard-webhooks', request, 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', options);
    expect(bare).toMatchObject({ ok: false, reason: 'bad-secret' });
    expect(bare.message).toContain('whsec_');

    const broken = await verifySignature('standard-webhooks', request, 'whsec_not*base64!', options);
    expect(broken.reason).toBe('bad-secret');
    expect(broken.message).toContain('base64');
  });

  it('bad-secret: an empty secret, a Stripe API key, a Slack token', async () => {
    expect((await verifySignature('github', githubRequest(), '  ')).reason).toBe('bad-secret');
    const header = `t=${NOW_SECONDS},v1=${stripeSignature(NOW_SECONDS)}`;
    const apiKey = await verifySignature('stripe', stripeRequest(header), 'sk_test_abc', { nowMs: NOW_MS });
    expect(apiKey.reason).toBe('bad-secret');
    expect(apiKey.message).toContain('API key');
    expect(
      (await verifySignature('slack', slackRequest(), 'xoxb-123-456', { nowMs: SLACK_TIMESTAMP * 1000 })).reason,
    ).toBe('bad-secret');
  });

  it('bad-secret comes before the timestamp check', async () => {
    const stale = makeRequest(swHeaders(), SW_BODY);
    expect((await verifySignature('standard-webhooks', stale, 'nope', { nowMs: NOW_MS })).reason).toBe('bad-secret');
  });

  it('timestamp-out-of-tolerance: too old gives a positive skew past the tolerance', async () => {
    const sent = NOW_SECONDS - 412;
    const header = `t=${sent},v1=${stripeSignature(sent)}`;
    const verdict = await verifySignature('stripe', stripeRequest(header), STRIPE_SECRET, { nowMs: NOW_MS });
    expect(verdict).toMatchObject({ ok: false, reason: 'timestamp-out-of-tolerance', skewSeconds: 112 });
    expect(verdict.message).toContain('412 s older');

    const milliseconds = await verifySignature(
      'stripe',
      stripeRequest(`t=${NOW_MS},v1=${stripeSignature(NOW_MS)}`),
      STRIPE_SECRET,
      { nowMs: NOW_MS },
    );
    expect(milliseconds.reason).toBe('timestamp-out-of-tolerance');
    expect(milliseconds.message).toContain('milliseconds');
  });

  it('timestamp-out-of-tolerance: from the future gives a negative skew; the tolerance is configurable', async () => {
    const request = makeRequest(swHeaders(), SW_BODY);
    const early = await verifySignature('standard-webhooks', request, SW_SECRET, {
      nowMs: (SW_TIMESTAMP - 360) * 1000,
    });
    expect(early).toMatchObject({ reason: 'timestamp-out-of-tolerance', skewSeconds: -60 });

    const tight = await verifySignature('standard-webhooks', request, SW_SECRET, {
      nowMs: (SW_TIMESTAMP + 31) * 1000,
      toleranceSeconds: 30,
    });
    expect(tight).toMatchObject({ reason: 'timestamp-out-of-tolerance', skewSeconds: 1 });
  });

  it('accepts a timestamp exactly at the tolerance edge', async () => {
    const request = makeRequest(swHeaders(), SW_BODY);
    const edge = await verifySignature('standard-webhooks', request, SW_SECRET, {
      nowMs: (SW_TIMESTAMP + 300) * 1000 + 999,
    });
    expect(edge.reason).toBe('valid');
  });

  it('the timestamp check comes before the comparison', async () => {
    const verdict = await verifySignature('slack', slackRequest(`v0=${'0'.repeat(64)}`), SLACK_SECRET, {
      nowMs: NOW_MS,
    });
    expect(verdict.reason).toBe('timestamp-out-of-tolerance');
    expect(verdict.skewSeconds).toBe(NOW_SECONDS - SLACK_TIMESTAMP - 300);
  });

  it('mismatch: a whsec_ secret given to GitHub is named as the likely cause', async () => {
    const verdict = await verifySignature('github', githubRequest(), 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    expect(verdict).toMatchObject({ ok: false, reason: 'mismatch', received: [GITHUB_SIGNATURE] });
    expect(verdict.expected).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verdict.message).toContain('whsec_');
  });

  it('mismatch: Stripe with several v1 says none matched and lists them', async () => {
    const header = `t=${NOW_SECONDS},v1=${'0'.repeat(64)},v1=${'1'.repeat(64)}`;
    const verdict = await verifySignature('stripe', stripeRequest(header), STRIPE_SECRET, { nowMs: NOW_MS });
    expect(verdict.reason).toBe('mismatch');
    expect(verdict.received).toEqual([`v1=${'0'.repeat(64)}`, `v1=${'1'.repeat(64)}`]);
    expect(verdict.message).toContain('None of the 2');
  });

  it('mismatch: a secret with stray whitespace is named as the likely cause', async () => {
    const verdict = await verifySignature('github', githubRequest(), `${GITHUB_SECRET}\n`);
    expect(verdict.reason).toBe('mismatch');
    expect(verdict.message).toContain('whitespace');
  });
});

describe('the secret stays out of verdicts', () => {
  it('appears in no message or field, whatever the outcome', async () => {
    const secrets: Record<Provider, string> = {
      github: 'gh-UNIQUE-s3cret-Zq81',
      stripe: 'whsec_UNIQUEstripeZq81',
      slack: 'UNIQUEslackZq81',
      shopify: 'UNIQUEshopifyZq81',
      'standard-webhooks': 'whsec_VU5JUVVFc3dzZWNyZXRacTgxISE=',
    };
    const requests: Record<Provider, SignedRequest> = {
      github: githubRequest(),
      stripe: stripeRequest(`t=${NOW_SECONDS},v1=${stripeSignature(NOW_SECONDS, secrets.stripe)}`),
      slack: slackRequest(`v0=${hmacHex(secrets.slack, `v0:${NOW_SECONDS}:${SLACK_BODY}`)}`, String(NOW_SECONDS)),
      shopify: shopifyRequest(hmacBase64(secrets.shopify, SHOPIFY_BODY)),
      'standard-webhooks': makeRequest(swHeaders(SW_SIGNATURE, 'webhook-', String(NOW_SECONDS)), SW_BODY),
    };
    const verdicts: Verdict[] = [];
    for (const provider of PROVIDERS) {
      const secret = secrets[provider];
      const request = requests[provider];
      verdicts.push(await verifySignature(provider, request, secret, { nowMs: NOW_MS }));
      verdicts.push(await verifySignature(provider, request, ` ${secret}`, { nowMs: NOW_MS }));
      verdicts.push(await verifySignature(provider, request, secret, { nowMs: NOW_MS + 3_600_000 }));
      verdicts.push(await verifySignature(provider, { ...request, truncated: true }, secret));
      verdicts.push(await verifySignature(provider, makeRequest([], 'x'), secret));
      for (const verdict of verdicts) {
        const text = JSON.stringify(verdict);
        expect(text).not.toContain(secret);
        expect(text).not.toContain(secret.replace(/^whsec_/, ''));
      }
    }
    // The loop reached the outcomes it means to cover.
    const reasons = new Set(verdicts.map((verdict) => verdict.reason));
    expect([...reasons]).toEqual(
      expect.arrayContaining([
        'valid',
        'mismatch',
        'bad-secret',
        'timestamp-out-of-tolerance',
        'truncated',
        'missing-header',
      ]),
    );
  });

  it('gives a message of at least a sentence for every verdict, never a bare "invalid"', async () => {
    const verdicts = [
      await verifySignature('github', githubRequest(), GITHUB_SECRET),
      await verifySignature('github', githubRequest(), 'wrong'),
      await verifySignature('github', githubRequest('nope'), GITHUB_SECRET),
      await verifySignature('github', makeRequest([], ''), GITHUB_SECRET),
    ];
    for (const verdict of verdicts) {
      expect(verdict.message.length).toBeGreaterThan(40);
      expect(verdict.message).toMatch(/\.$/);
    }
  });
});

describe('detectProvider', () => {
  const cases: Array<[Provider, Headers]> = [
    ['github', [['X-Hub-Signature-256', GITHUB_SIGNATURE]]],
    ['github', [['X-GitHub-Event', 'ping']]],
    ['stripe', [['stripe-signature', `t=${NOW_SECONDS},v1=00`]]],
    ['slack', [['X-Slack-Signature', SLACK_SIGNATURE]]],
    ['slack', [['x-slack-request-timestamp', '1']]],
    ['shopify', [['X-Shopify-Hmac-SHA256', 'abc=']]],
    ['shopify', [['X-Shopify-Topic', 'orders/create']]],
    ['standard-webhooks', [['webhook-signature', SW_SIGNATURE]]],
    ['standard-webhooks', [['Svix-Signature', SW_SIGNATURE]]],
    ['standard-webhooks', [['svix-id', SW_ID]]],
  ];
  for (const [provider, headers] of cases) {
    it(`recognises ${provider} by ${headers[0]?.[0] ?? ''}`, () => {
      expect(detectProvider(headers)).toBe(provider);
    });
  }

  it('prefers a signature header over a header that only names a sender', () => {
    expect(
      detectProvider([
        ['X-GitHub-Event', 'push'],
        ['Stripe-Signature', 't=1,v1=00'],
      ]),
    ).toBe('stripe');
  });

  it('returns undefined for a plain request', () => {
    expect(
      detectProvider([
        ['Content-Type', 'application/json'],
        ['User-Agent', 'curl/8'],
        ['X-Signature', 'abc'],
      ]),
    ).toBeUndefined();
    expect(detectProvider([])).toBeUndefined();
  });

  it('lists every provider once', () => {
    expect([...PROVIDERS].sort()).toEqual(['github', 'shopify', 'slack', 'standard-webhooks', 'stripe']);
  });
});
