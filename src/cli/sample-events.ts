import { randomUUID } from 'node:crypto';
import type { Provider } from '../shared/signatures/index.js';

/** A test event as the provider would send it: its body and the headers that name it (not the signature). */
export interface SampleEvent {
  body: string;
  headers: Array<[string, string]>;
}

interface ProviderSamples {
  /** The event `--event` defaults to. */
  defaultEvent: string;
  /** Event type → its body, made fresh (ids, times) each time. */
  events: Record<string, (now: Date) => unknown>;
  /** The headers the provider sends with every event: type, delivery id, user agent. */
  headers(event: string, now: Date): Array<[string, string]>;
  /** Content-Type for a body given as a file (the samples are all JSON). */
  contentType: string;
}

const randomHex = (length: number) => randomUUID().replaceAll('-', '').slice(0, length);
const unixSeconds = (now: Date) => Math.floor(now.getTime() / 1000);
const repository = {
  id: 1296269,
  name: 'hello-world',
  full_name: 'octocat/hello-world',
  private: false,
  html_url: 'https://github.com/octocat/hello-world',
};
const sender = { login: 'octocat', id: 1, type: 'User' };

// Shapes follow each provider's documented examples, cut to the fields a handler usually reads.
const SAMPLES: Record<Provider, ProviderSamples> = {
  github: {
    defaultEvent: 'push',
    contentType: 'application/json',
    events: {
      push: () => ({
        ref: 'refs/heads/main',
        before: '0000000000000000000000000000000000000000',
        after: randomHex(32) + randomHex(8),
        repository,
        pusher: { name: 'octocat', email: 'octocat@example.com' },
        sender,
        commits: [
          {
            id: randomHex(32) + randomHex(8),
            message: 'Update README.md',
            author: { name: 'Octo Cat', email: 'octocat@example.com' },
          },
        ],
      }),
      ping: () => ({
        zen: 'Keep it logically awesome.',
        hook_id: 1,
        hook: { type: 'Repository', active: true, events: ['push'] },
        repository,
        sender,
      }),
      pull_request: () => ({
        action: 'opened',
        number: 1,
        pull_request: {
          number: 1,
          title: 'Test pull request',
          state: 'open',
          head: { ref: 'feature' },
          base: { ref: 'main' },
        },
        repository,
        sender,
      }),
      issues: () => ({
        action: 'opened',
        issue: { number: 1, title: 'Test issue', state: 'open', body: 'Sent by hookwatch send' },
        repository,
        sender,
      }),
    },
    headers: (event) => [
      ['User-Agent', 'GitHub-Hookshot/hookwatch'],
      ['X-GitHub-Event', event],
      ['X-GitHub-Delivery', randomUUID()],
      ['X-GitHub-Hook-ID', '1'],
    ],
  },
  stripe: {
    defaultEvent: 'checkout.session.completed',
    contentType: 'application/json; charset=utf-8',
    events: {
      'checkout.session.completed': () => ({
        id: `cs_test_${randomHex(24)}`,
        object: 'checkout.session',
        amount_total: 2000,
        currency: 'usd',
        customer: `cus_${randomHex(14)}`,
        mode: 'payment',
        payment_status: 'paid',
        status: 'complete',
      }),
      'payment_intent.succeeded': () => ({
        id: `pi_${randomHex(24)}`,
        object: 'payment_intent',
        amount: 2000,
        amount_received: 2000,
        currency: 'usd',
        status: 'succeeded',
      }),
      'invoice.paid': () => ({
        id: `in_${randomHex(24)}`,
        object: 'invoice',
        amount_paid: 2000,
        currency: 'usd',
        customer: `cus_${randomHex(14)}`,
        status: 'paid',
      }),
      'customer.subscription.created': () => ({
        id: `sub_${randomHex(24)}`,
        object: 'subscription',
        customer: `cus_${randomHex(14)}`,
        status: 'active',
      }),
    },
    headers: () => [['User-Agent', 'Stripe/1.0 (+https://stripe.com/docs/webhooks)']],
  },
  slack: {
    defaultEvent: 'app_mention',
    contentType: 'application/json',
    events: {
      url_verification: () => ({ token: 'verification-token', challenge: randomHex(32), type: 'url_verification' }),
      app_mention: (now) => ({
        token: 'verification-token',
        team_id: 'T0001',
        api_app_id: 'A0001',
        type: 'event_callback',
        event_id: `Ev${randomHex(10).toUpperCase()}`,
        event_time: unixSeconds(now),
        event: {
          type: 'app_mention',
          user: 'U0001',
          text: '<@U0002> hello',
          ts: `${unixSeconds(now)}.000100`,
          channel: 'C0001',
        },
      }),
      message: (now) => ({
        token: 'verification-token',
        team_id: 'T0001',
        api_app_id: 'A0001',
        type: 'event_callback',
        event_id: `Ev${randomHex(10).toUpperCase()}`,
        event_time: unixSeconds(now),
        event: {
          type: 'message',
          channel_type: 'channel',
          user: 'U0001',
          text: 'hello',
          ts: `${unixSeconds(now)}.000200`,
          channel: 'C0001',
        },
      }),
    },
    headers: () => [['User-Agent', 'Slackbot 1.0 (+https://api.slack.com/robots)']],
  },
  shopify: {
    defaultEvent: 'orders/create',
    contentType: 'application/json',
    events: {
      'orders/create': (now) => ({
        id: Number(`820982911${String(now.getTime()).slice(-6)}`),
        email: 'jon@example.com',
        created_at: now.toISOString(),
        currency: 'USD',
        total_price: '20.00',
        financial_status: 'paid',
        line_items: [{ id: 1, title: 'Test product', quantity: 1, price: '20.00' }],
      }),
      'products/update': (now) => ({
        id: 788032119674292900,
        title: 'Test product',
        updated_at: now.toISOString(),
        status: 'active',
        variants: [{ id: 1, price: '20.00' }],
      }),
      'app/uninstalled': () => ({
        id: 1,
        name: 'Test shop',
        domain: 'example.myshopify.com',
        myshopify_domain: 'example.myshopify.com',
      }),
    },
    headers: (event, now) => [
      ['User-Agent', 'Shopify-Captain-Hook'],
      ['X-Shopify-Topic', event],
      ['X-Shopify-Shop-Domain', 'example.myshopify.com'],
      ['X-Shopify-API-Version', '2025-01'],
      ['X-Shopify-Webhook-Id', randomUUID()],
      ['X-Shopify-Event-Id', randomUUID()],
      ['X-Shopify-Triggered-At', now.toISOString()],
    ],
  },
  'standard-webhooks': {
    defaultEvent: 'invoice.paid',
    contentType: 'application/json',
    events: {
      'invoice.paid': (now) => ({
        type: 'invoice.paid',
        timestamp: now.toISOString(),
        data: { id: `inv_${randomHex(16)}`, amount: 2000, currency: 'usd' },
      }),
      'user.created': (now) => ({
        type: 'user.created',
        timestamp: now.toISOString(),
        data: { id: `user_${randomHex(16)}`, email: 'user@example.com' },
      }),
    },
    headers: () => [['User-Agent', 'hookwatch-send (Standard Webhooks)']],
  },
};

/** The event types bundled for a provider, its default first. */
export function sampleEventNames(provider: Provider): string[] {
  const samples = SAMPLES[provider];
  return [samples.defaultEvent, ...Object.keys(samples.events).filter((name) => name !== samples.defaultEvent)];
}

export function isSampleEvent(provider: Provider, event: string): boolean {
  return Object.hasOwn(SAMPLES[provider].events, event);
}

/**
 * The provider's usual headers for `event` (type, delivery id, user agent, content type) and,
 * when it is a bundled sample, its body, made fresh. Stripe and Standard Webhooks carry the event
 * type in the body, so theirs is wrapped in the event envelope here.
 */
export function sampleEvent(
  provider: Provider,
  event: string | undefined,
  now = new Date(),
): { event: string; headers: Array<[string, string]>; body: string | undefined } {
  const samples = SAMPLES[provider];
  const name = event ?? samples.defaultEvent;
  const make = Object.hasOwn(samples.events, name) ? samples.events[name] : undefined;
  let body: string | undefined;
  if (make !== undefined) {
    const data = make(now);
    const wrapped =
      provider === 'stripe'
        ? {
            id: `evt_${randomHex(24)}`,
            object: 'event',
            api_version: '2025-01-27.acacia',
            created: unixSeconds(now),
            type: name,
            livemode: false,
            pending_webhooks: 1,
            data: { object: data },
          }
        : data;
    body = JSON.stringify(wrapped, null, 2);
  }
  return { event: name, headers: [...samples.headers(name, now), ['Content-Type', samples.contentType]], body };
}
