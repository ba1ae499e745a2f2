import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, runCli } from '../helpers/cli.js';
import { send } from '../helpers/http.js';
import { SocketClient } from '../helpers/socket-client.js';
import { RawTarget } from '../helpers/raw-target.js';
import { startServer } from '../helpers/server.js';

const STRIPE_SECRET = 'whsec_hookwatch_replay_test';
const BODY = '{"id":"evt_1","type":"invoice.paid","data":{"object":{"amount":100}}}';
const headerOf = (headers: Array<[string, string]>, name: string) =>
  headers.find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];

/** A Stripe-Signature as Stripe made it `ageSeconds` ago. */
function stripeSignature(body: string, ageSeconds: number): string {
  const t = Math.floor(Date.now() / 1000) - ageSeconds;
  return `t=${t},v1=${createHmac('sha256', STRIPE_SECRET).update(`${t}.${body}`).digest('hex')}`;
}

describe('hookwatch replay', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  beforeAll(() => ensureCliBuilt(), 120_000);

  /** A live endpoint, watched by a socket so it lives, with one Stripe event captured 20 minutes after it was signed. */
  async function captured() {
    const server = await startServer();
    cleanups.push(server.close);
    const { client, welcome } = await SocketClient.create(server.wsUrl);
    cleanups.push(() => client.close());
    const sent = await send(`${welcome.endpoint.url}/stripe/events?src=test`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'Stripe-Signature': stripeSignature(BODY, 1200),
        'X-Forwarded-For': '10.9.8.7',
      },
      body: BODY,
    });
    expect(sent.status).toBe(200);
    await client.requests(1);
    const target = await RawTarget.start();
    cleanups.push(() => target.close());
    return {
      client,
      target,
      link: `${server.baseUrl}/#${welcome.endpoint.id}.${welcome.endpoint.key}`,
      receiver: welcome.endpoint.url,
    };
  }

  async function editorScript(source: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'hookwatch-editor-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const script = join(dir, 'edit.mjs');
    await writeFile(
      script,
      `import { readFileSync, writeFileSync } from 'node:fs';\nconst file = process.argv[2];\nconst text = readFileSync(file, 'utf8');\n${source}\n`,
    );
    return `${process.execPath} ${script}`;
  }

  it('sends the stored request again byte for byte under --to, prints the answer, and a stale Stripe signature then fails the SDK', async () => {
    const { target, link } = await captured();
    const result = await runCli(['replay', link, '1', '--to', target.url('/hook')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^HTTP 200 in \d+ ms\n/);
    expect(result.stderr).toMatch(
      /replay of #1: POST \/stripe\/events\?src=test → http:\/\/127\.0\.0\.1:\d+\/hook\/stripe\/events\?src=test/,
    );
    const [received] = await target.waitForRequests(1);
    expect(received?.method).toBe('POST');
    expect(received?.target).toBe('/hook/stripe/events?src=test');
    expect(received?.body.toString()).toBe(BODY);
    // The sender's forwarding header is replaced by the address the server saw, as forward does.
    expect(headerOf(received?.headers ?? [], 'x-forwarded-for')).toBe('127.0.0.1');
    expect(JSON.stringify(received?.headers)).not.toContain('10.9.8.7');
    const header = headerOf(received?.headers ?? [], 'stripe-signature') ?? '';
    expect(() =>
      new Stripe('sk_test_unused').webhooks.constructEvent(received?.body ?? '', header, STRIPE_SECRET),
    ).toThrow(/Timestamp outside the tolerance zone/);
  });

  it('--secret signs it again with a fresh timestamp, which the Stripe SDK accepts', async () => {
    const { target, link } = await captured();
    const result = await runCli(['replay', link, '#1', '--to', target.url('/hook'), '--secret', 'env:REPLAY_SECRET'], {
      env: { REPLAY_SECRET: STRIPE_SECRET },
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/signed again as stripe: Stripe-Signature changed/);
    const [received] = await target.waitForRequests(1);
    const event = new Stripe('sk_test_unused').webhooks.constructEvent(
      received?.body ?? '',
      headerOf(received?.headers ?? [], 'stripe-signature') ?? '',
      STRIPE_SECRET,
    );
    expect(event.id).toBe('evt_1');
  });

  it('--edit sends exactly what the editor saved (one JSON field changed), re-signed', async () => {
    const { target, link } = await captured();
    const editor = await editorScript(
      `writeFileSync(file, text.replace('"amount":100', '"amount":250').replace('POST /stripe/events?src=test', 'PUT /stripe/edited') + '\\n');`,
    );
    const result = await runCli(
      ['replay', link, '1', '--to', target.url('/hook'), '--edit', '--secret', STRIPE_SECRET, '--provider', 'stripe'],
      { env: { EDITOR: editor, VISUAL: '' } },
    );
    expect(result.code).toBe(0);
    const [received] = await target.waitForRequests(1);
    expect(received?.method).toBe('PUT');
    expect(received?.target).toBe('/hook/stripe/edited');
    // The newline the editor added at the end is not part of the body.
    expect(received?.body.toString()).toBe(BODY.replace('"amount":100', '"amount":250'));
    expect(() =>
      new Stripe('sk_test_unused').webhooks.constructEvent(
        received?.body ?? '',
        headerOf(received?.headers ?? [], 'stripe-signature') ?? '',
        STRIPE_SECRET,
      ),
    ).not.toThrow();
  });

  it('without --to, the request goes back to the endpoint and is captured again as a new request', async () => {
    const { client, link } = await captured();
    const result = await runCli(['replay', link, '1']);
    expect(result.code).toBe(0);
    const [again] = await client.requests(1);
    expect(again?.seq).toBe(2);
    expect(again?.url).toMatch(/\/stripe\/events\?src=test$/);
    expect(again?.body).toBe(BODY);
  });

  it('refuses bad input, sends nothing, and exits non-zero with a clear message', async () => {
    const { target, link } = await captured();
    const to = target.url('/hook');
    const garbage = await editorScript(`writeFileSync(file, 'this is not an HTTP request');`);
    const badHeader = await editorScript(`writeFileSync(file, 'POST / HTTP/1.1\\nBad Header: x\\n\\nbody');`);
    const failing = await editorScript(`process.exit(3);`);
    const huge = await editorScript(`writeFileSync(file, 'POST / HTTP/1.1\\n\\n' + 'x'.repeat(11 * 1024 * 1024));`);
    const cases: Array<[string[], Record<string, string>, number, RegExp]> = [
      [
        ['replay', link, '1', '--to', to, '--edit'],
        { EDITOR: garbage, VISUAL: '' },
        2,
        /the edited request is not valid HTTP: there is no blank line after the headers \(the body starts after one\); nothing was sent/,
      ],
      [
        ['replay', link, '1', '--to', to, '--edit'],
        { EDITOR: badHeader, VISUAL: '' },
        2,
        /not valid HTTP: line 2: the header name is not valid/,
      ],
      [
        ['replay', link, '1', '--to', to, '--edit'],
        { EDITOR: failing, VISUAL: '' },
        2,
        /the editor exited with 3; nothing was sent/,
      ],
      [
        ['replay', link, '1', '--to', to, '--edit'],
        { EDITOR: huge, VISUAL: '' },
        2,
        /larger than 10 MiB; nothing was sent/,
      ],
      [['replay', link, '1', '--to', to, '--provider', 'gitlab', '--secret', 'x'], {}, 2, /--provider must be one of/],
      [['replay', link, '1', '--to', to, '--provider', 'stripe'], {}, 2, /--provider stripe goes with --secret/],
      [
        ['replay', link, '1', '--to', to, '--secret', 'env:HOOKWATCH_TEST_UNSET'],
        {},
        2,
        /HOOKWATCH_TEST_UNSET is not set or is empty/,
      ],
      [['replay', link, '1', '--to', to, '--secret', 'sk_test_secretvalue'], {}, 2, /That is a Stripe API key/],
      [['replay', link, 'x', '--to', to], {}, 2, /<seq> must be a whole number/],
      [['replay', link], {}, 2, /expected the share link and the request's seq/],
      [['replay', link, '7', '--to', to], {}, 1, /request #7 is not stored/],
    ];
    for (const [args, env, code, message] of cases) {
      const result = await runCli(args, { env });
      expect({ args, code: result.code }).toEqual({ args, code });
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toContain('secretvalue');
    }
    expect(target.requests).toHaveLength(0);

    const closed = await RawTarget.start();
    const port = closed.port;
    await closed.close();
    const refused = await runCli(['replay', link, '1', '--to', `http://127.0.0.1:${port}/`]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/not delivered: .*ECONNREFUSED/);
  });
});
