import { createHmac } from 'node:crypto';
import { verify as verifyGithub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import {
  PROVIDERS,
  signRequest,
  verifySignature,
  type Provider,
  type SigningResult,
} from '../../src/shared/signatures/index.js';

const encoder = new TextEncoder();
const BODY = '{"id":"evt_1","type":"checkout.session.completed","data":{"object":{"amount_total":4200,"note":"é ✓"}}}';

type Headers = Array<[string, string]>;

function signed(result: SigningResult): Extract<SigningResult, { ok: true }> {
  if (!result.ok) throw new Error(`signing failed: ${result.message}`);
  return result;
}

function headerOf(headers: Headers, name: string): string {
  const found = headers.find(([key]) => key.toLowerCase() === name.toLowerCase());
  if (!found) throw new Error(`no ${name} header`);
  return found[1];
}

const SECRETS: Record<Provider, string> = {
  github: "It's a Secret to Everybody",
  stripe: 'whsec_test_secret_for_hookwatch',
  slack: '8f742231b10e8888abcd99yyyzzz85a5',
  shopify: 'shopify-client-secret',
  'standard-webhooks': 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
};

describe('signRequest, checked by the providers own libraries', () => {
  it('GitHub: @octokit/webhooks-methods accepts X-Hub-Signature-256, and the legacy SHA-1 one is signed again when present', async () => {
    const result = signed(
      await signRequest(
        'github',
        {
          headers: [
            ['X-GitHub-Event', 'push'],
            ['X-Hub-Signature', 'sha1=stale'],
          ],
          body: encoder.encode(BODY),
        },
        SECRETS.github,
      ),
    );
    expect(await verifyGithub(SECRETS.github, BODY, headerOf(result.headers, 'X-Hub-Signature-256'))).toBe(true);
    expect(headerOf(result.headers, 'X-Hub-Signature')).toBe(
      `sha1=${createHmac('sha1', SECRETS.github).update(BODY).digest('hex')}`,
    );
    expect(await verifyGithub('another secret', BODY, headerOf(result.headers, 'X-Hub-Signature-256'))).toBe(false);
  });

  it("Stripe: the SDK's constructEvent accepts Stripe-Signature with a fresh t=", async () => {
    const stripe = new Stripe('sk_test_unused');
    const old: Headers = [
      ['Content-Type', 'application/json'],
      ['Stripe-Signature', 't=1600000000,v1=00,v1=11,v0=22'],
    ];
    const result = signed(await signRequest('stripe', { headers: old, body: encoder.encode(BODY) }, SECRETS.stripe));
    const header = headerOf(result.headers, 'Stripe-Signature');
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const event = stripe.webhooks.constructEvent(BODY, header, SECRETS.stripe);
    expect(event.type).toBe('checkout.session.completed');
    expect(() => stripe.webhooks.constructEvent(BODY.replace('4200', '4201'), header, SECRETS.stripe)).toThrow();
    // The old header was replaced in place, not added beside.
    expect(result.headers.map(([name]) => name)).toEqual(['Content-Type', 'Stripe-Signature']);
  });

  it('Standard Webhooks: the reference library accepts webhook-*, keeping the message id', async () => {
    const headers: Headers = [
      ['webhook-id', 'msg_keep'],
      ['webhook-timestamp', '1'],
      ['webhook-signature', 'v1,old'],
    ];
    const result = signed(
      await signRequest('standard-webhooks', { headers, body: encoder.encode(BODY) }, SECRETS['standard-webhooks']),
    );
    expect(headerOf(result.headers, 'webhook-id')).toBe('msg_keep');
    const wh = new Webhook(SECRETS['standard-webhooks']);
    expect(wh.verify(BODY, Object.fromEntries(result.headers))).toEqual(JSON.parse(BODY));
  });

  it('Standard Webhooks: a request with svix- headers is signed under svix- names; one with none gets a fresh id', async () => {
    const svix = signed(
      await signRequest(
        'standard-webhooks',
        {
          headers: [
            ['svix-id', 'msg_s'],
            ['svix-timestamp', '1'],
            ['svix-signature', 'v1,x'],
          ],
          body: encoder.encode(BODY),
        },
        SECRETS['standard-webhooks'],
      ),
    );
    expect(svix.headers.map(([name]) => name)).toEqual(['svix-id', 'svix-timestamp', 'svix-signature']);
    const asStandard = Object.fromEntries(
      svix.headers.map(([name, value]) => [name.replace('svix-', 'webhook-'), value]),
    );
    expect(new Webhook(SECRETS['standard-webhooks']).verify(BODY, asStandard)).toEqual(JSON.parse(BODY));
    const fresh = signed(
      await signRequest('standard-webhooks', { headers: [], body: encoder.encode(BODY) }, SECRETS['standard-webhooks']),
    );
    expect(headerOf(fresh.headers, 'webhook-id')).toMatch(/^msg_[0-9a-f]{24}$/);
    expect(fresh.changed.every((change) => change.before === undefined)).toBe(true);
  });

  it('Slack: the documented v0 recipe (node:crypto) matches, with X-Slack-Request-Timestamp = now', async () => {
    const nowMs = 1_700_000_123_456;
    const result = signed(
      await signRequest(
        'slack',
        {
          headers: [
            ['X-Slack-Request-Timestamp', '1'],
            ['X-Slack-Signature', 'v0=00'],
          ],
          body: encoder.encode(BODY),
        },
        SECRETS.slack,
        { nowMs },
      ),
    );
    expect(headerOf(result.headers, 'X-Slack-Request-Timestamp')).toBe('1700000123');
    const expected = `v0=${createHmac('sha256', SECRETS.slack).update(`v0:1700000123:${BODY}`).digest('hex')}`;
    expect(headerOf(result.headers, 'X-Slack-Signature')).toBe(expected);
  });

  it('Shopify: the documented recipe (base64 HMAC of the body, node:crypto) matches', async () => {
    const result = signed(
      await signRequest(
        'shopify',
        { headers: [['X-Shopify-Topic', 'orders/create']], body: encoder.encode(BODY) },
        SECRETS.shopify,
      ),
    );
    expect(headerOf(result.headers, 'X-Shopify-Hmac-Sha256')).toBe(
      createHmac('sha256', SECRETS.shopify).update(BODY).digest('base64'),
    );
  });

  it.each(PROVIDERS)(
    '%s: what it signs, Hookwatch verifies as valid now, and says which headers changed',
    async (provider) => {
      const result = signed(
        await signRequest(provider, { headers: [], body: encoder.encode(BODY) }, SECRETS[provider]),
      );
      const verdict = await verifySignature(
        provider,
        { headers: result.headers, body: encoder.encode(BODY), truncated: false },
        SECRETS[provider],
      );
      expect(verdict.reason).toBe('valid');
      expect(result.changed.map((change) => change.name)).toEqual(result.headers.map(([name]) => name));
    },
  );

  it('keeps every other header in place, case and duplicates included, and folds a repeated signature header into one', async () => {
    const headers: Headers = [
      ['X-A', '1'],
      ['x-hub-signature-256', 'sha256=old'],
      ['X-A', '2'],
      ['X-HUB-SIGNATURE-256', 'sha256=older'],
    ];
    const result = signed(await signRequest('github', { headers, body: encoder.encode(BODY) }, SECRETS.github));
    expect(result.headers.map(([name]) => name)).toEqual(['X-A', 'x-hub-signature-256', 'X-A']);
    expect(result.changed).toEqual([
      { name: 'x-hub-signature-256', before: 'sha256=old', after: result.headers[1]?.[1] },
    ]);
  });

  it('refuses a secret the verifier would refuse, and never quotes it', async () => {
    const cases: Array<[Provider, string]> = [
      ['stripe', 'sk_live_abcdef'],
      ['slack', 'xoxb-123-456'],
      ['shopify', 'shpat_0123'],
      ['standard-webhooks', 'not-prefixed'],
      ['standard-webhooks', 'whsec_!!!'],
      ['github', '   '],
    ];
    for (const [provider, secret] of cases) {
      const result = await signRequest(provider, { headers: [], body: encoder.encode(BODY) }, secret);
      expect(result.ok, `${provider} ${secret}`).toBe(false);
      if (!result.ok) {
        expect(result.reason).toBe('bad-secret');
        if (secret.trim() !== '') expect(result.message).not.toContain(secret);
      }
    }
  });

  it('signs a 1 MiB binary body and an empty one', async () => {
    const big = new Uint8Array(1024 * 1024).map((_, i) => i % 251);
    const result = signed(await signRequest('shopify', { headers: [], body: big }, SECRETS.shopify));
    expect(headerOf(result.headers, 'X-Shopify-Hmac-Sha256')).toBe(
      createHmac('sha256', SECRETS.shopify).update(big).digest('base64'),
    );
    const empty = signed(await signRequest('github', { headers: [], body: new Uint8Array() }, SECRETS.github));
    // octokit refuses an empty payload outright, so the empty body is checked with the documented recipe.
    expect(headerOf(empty.headers, 'X-Hub-Signature-256')).toBe(
      `sha256=${createHmac('sha256', SECRETS.github).update('').digest('hex')}`,
    );
  });
});
