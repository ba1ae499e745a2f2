import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verify as verifyGithub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/shared/signatures/index.js';
import { ensureCliBuilt, runCli } from '../helpers/cli.js';
import { SocketClient } from '../helpers/socket-client.js';
import { RawTarget } from '../helpers/raw-target.js';
import { startServer } from '../helpers/server.js';

const STRIPE_SECRET = 'whsec_hookwatch_send_test';
const GITHUB_SECRET = 'github-send-secret';
const SW_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

const headerOf = (headers: Array<[string, string]>, name: string) =>
  headers.find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];

describe('hookwatch send', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  beforeAll(() => ensureCliBuilt(), 120_000);

  async function target(): Promise<RawTarget> {
    const t = await RawTarget.start();
    cleanups.push(() => t.close());
    return t;
  }

  it("sends a bundled Stripe event with Stripe's headers, signed so that Stripe's SDK accepts it, and prints the answer", async () => {
    const t = await target();
    const result = await runCli(
      [
        'send',
        '--to',
        t.url('/webhooks/stripe?x=1'),
        '--provider',
        'stripe',
        '--secret',
        'env:STRIPE_TEST_SECRET',
        '--event',
        'payment_intent.succeeded',
      ],
      {
        env: { STRIPE_TEST_SECRET: STRIPE_SECRET },
      },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^HTTP 200 in \d+ ms\n/);
    expect(result.stdout).toMatch(/\n\nok\n$/);
    expect(result.stderr).toMatch(
      /sending POST http:\/\/127\.0\.0\.1:\d+\/webhooks\/stripe\?x=1 as stripe payment_intent\.succeeded, signed \(Stripe-Signature\)/,
    );
    const [received] = await t.waitForRequests(1);
    expect(received?.target).toBe('/webhooks/stripe?x=1');
    expect(headerOf(received?.headers ?? [], 'user-agent')).toMatch(/^Stripe\/1\.0/);
    const event = new Stripe('sk_test_unused').webhooks.constructEvent(
      received?.body ?? Buffer.alloc(0),
      headerOf(received?.headers ?? [], 'stripe-signature') ?? '',
      STRIPE_SECRET,
    );
    expect(event.type).toBe('payment_intent.succeeded');
    expect(event.id).toMatch(/^evt_/);
  });

  it('sends to a Hookwatch receiver URL: the captured GitHub event verifies as valid, with octokit too', async () => {
    const server = await startServer();
    cleanups.push(server.close);
    const { client, welcome } = await SocketClient.create(server.wsUrl);
    cleanups.push(() => client.close());
    const result = await runCli([
      'send',
      '--to',
      `${welcome.endpoint.url}/github`,
      '--provider',
      'github',
      '--secret',
      GITHUB_SECRET,
      '--header',
      'X-Extra=1',
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/visible to other users of this machine/);
    expect(result.stderr + result.stdout).not.toContain(GITHUB_SECRET);
    const [captured] = await client.requests(1);
    if (!captured) throw new Error('nothing captured');
    expect(headerOf(captured.headers, 'x-github-event')).toBe('push');
    expect(headerOf(captured.headers, 'x-github-delivery')).toMatch(/^[0-9a-f-]{36}$/);
    expect(headerOf(captured.headers, 'x-extra')).toBe('1');
    expect(
      await verifyGithub(GITHUB_SECRET, captured.body, headerOf(captured.headers, 'x-hub-signature-256') ?? ''),
    ).toBe(true);
    const verdict = await verifySignature(
      'github',
      { headers: captured.headers, body: new TextEncoder().encode(captured.body), truncated: false },
      GITHUB_SECRET,
    );
    expect(verdict.reason).toBe('valid');
  });

  it('signs a body file as Standard Webhooks; the reference library accepts it', async () => {
    const t = await target();
    const dir = await mkdtemp(join(tmpdir(), 'hookwatch-send-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'body.json');
    await writeFile(file, '{"type":"user.deleted","data":{"id":"u_1"}}');
    const result = await runCli([
      'send',
      '--to',
      t.url('/sw'),
      '--provider',
      'standard-webhooks',
      '--secret',
      SW_SECRET,
      '--header',
      'Content-Type=application/json',
      file,
    ]);
    expect(result.code).toBe(0);
    const [received] = await t.waitForRequests(1);
    const headers = Object.fromEntries((received?.headers ?? []).map(([name, value]) => [name.toLowerCase(), value]));
    expect(new Webhook(SW_SECRET).verify(received?.body ?? '', headers)).toEqual({
      type: 'user.deleted',
      data: { id: 'u_1' },
    });
  });

  it('exits 1 for a 5xx answer and for a --to that refuses the connection', async () => {
    const failing: Server = createServer((_request, response) =>
      response.writeHead(503, { 'content-type': 'text/plain' }).end('down'),
    );
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => failing.close(resolve)));
    const address = failing.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const five = await runCli([
      'send',
      '--to',
      `http://127.0.0.1:${address.port}/`,
      '--provider',
      'shopify',
      '--secret',
      'x',
    ]);
    expect(five.code).toBe(1);
    expect(five.stdout).toMatch(/^HTTP 503/);
    expect(five.stderr).toMatch(/the target answered 503, a server error/);

    const closed = await RawTarget.start();
    const port = closed.port;
    await closed.close();
    const refused = await runCli([
      'send',
      '--to',
      `http://127.0.0.1:${port}/`,
      '--provider',
      'slack',
      '--secret',
      '8f742231b10e8888abcd99yyyzzz85a5',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/not delivered: .*ECONNREFUSED/);
  });

  it('refuses bad input with exit 2 and a clear message, sending nothing and never quoting the secret', async () => {
    const t = await target();
    const dir = await mkdtemp(join(tmpdir(), 'hookwatch-send-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const huge = join(dir, 'huge.bin');
    await writeFile(huge, '');
    await truncate(huge, 10 * 1024 * 1024 + 1);
    const to = t.url('/');
    const cases: Array<[string[], RegExp]> = [
      [
        ['send', '--to', to, '--provider', 'gitlab', '--secret', 'x'],
        /--provider must be one of github, stripe, slack, shopify, standard-webhooks/,
      ],
      [['send', '--to', to, '--provider', 'github'], /--provider github needs --secret/],
      [
        ['send', '--to', to, '--provider', 'github', '--secret', 'env:HOOKWATCH_TEST_UNSET'],
        /HOOKWATCH_TEST_UNSET is not set or is empty/,
      ],
      [
        ['send', '--to', to, '--provider', 'stripe', '--secret', 'sk_live_secretvalue'],
        /That is a Stripe API key, not a webhook signing secret/,
      ],
      [
        ['send', '--to', to, '--provider', 'standard-webhooks', '--secret', 'plainsecretvalue'],
        /secrets start with whsec_/,
      ],
      [
        ['send', '--to', to, '--provider', 'github', '--secret', 'x', '--event', 'nope'],
        /no bundled github event "nope"; bundled: push, ping, pull_request, issues/,
      ],
      [['send', '--to', to, '--secret', 'secretvalue'], /--secret goes with --provider/],
      [['send', '--to', to], /nothing to send/],
      [['send', '--provider', 'github', '--secret', 'x'], /--to <url> is required/],
      [
        ['send', '--to', 'ftp://x/', '--provider', 'github', '--secret', 'x'],
        /--to must start with http:\/\/ or https:\/\//,
      ],
      [
        ['send', '--to', to, '--header', 'Bad Name=1', join(dir, 'x')],
        /--header number 1 has a name that is not a valid header name/,
      ],
      [['send', '--to', to, '--header', 'noequals'], /--header number 1 should be Name=Value/],
      [['send', '--to', to, join(dir, 'missing.json')], /cannot read the body file: ENOENT/],
      [['send', '--to', to, huge], /the body is larger than 10 MiB/],
      [
        ['send', '--to', to, '--method', 'GE T', '--provider', 'github', '--secret', 'x'],
        /--method is not a valid HTTP method/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toContain('secretvalue');
    }
    expect(t.requests).toHaveLength(0);
  });

  it('--help lists the bundled events', async () => {
    const result = await runCli(['send', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: hookwatch send /);
    expect(result.stdout).toContain('checkout.session.completed');
  });
});
