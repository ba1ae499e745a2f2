import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Page } from 'playwright-core';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, startCli, type CliRun } from '../helpers/cli.js';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import { checkAxe, openPage, openRow, serverAndBrowser, VIEWS, viewContext } from './page-helpers.js';

const SECRET = 'whsec_e2e_replay_secret';
const BODY =
  '{"id":"evt_e2e","object":"event","type":"invoice.paid","data":{"object":{"amount":100,"currency":"usd"}}}';
/** One light view per size: 1280×800 and 390×844. */
const SIZES = VIEWS.filter((view) => view.colorScheme === 'light');

/** A local app that checks Stripe signatures with Stripe's own SDK (tolerance 300 s), as a real handler would. */
async function startStripeApp(): Promise<{ url: string; bodies: string[]; close: () => Promise<void> }> {
  const stripe = new Stripe('sk_test_unused');
  const bodies: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      bodies.push(raw.toString());
      try {
        stripe.webhooks.constructEvent(raw, String(request.headers['stripe-signature'] ?? ''), SECRET);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
      } catch (error) {
        response
          .writeHead(400, { 'content-type': 'text/plain' })
          .end(`signature check failed: ${(error as Error).message}`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}/webhook`,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const replayForm = (page: Page) => page.locator('#detail .replay-form');
const replayStatus = (page: Page) => page.locator('#detail .replay-status');

describe.skipIf(!haveChromium)('replay, sign again and edit from the page, through hookwatch forward', () => {
  const rig = serverAndBrowser();
  let app: Awaited<ReturnType<typeof startStripeApp>>;
  beforeAll(async () => {
    await ensureCliBuilt();
    app = await startStripeApp();
  }, 120_000);
  afterAll(() => app?.close());

  for (const view of SIZES) {
    it(`${view.name}: a stale Stripe event fails the local app, passes once signed again, and an edit reaches it exactly; no forwarder is said so`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url: receiver, errors } = await openPage(context, rig.server.baseUrl);
      const link = page.url();
      // Captured now, signed by "Stripe" ten minutes ago: past the SDK's 300 s tolerance by the time it is replayed.
      const t = Math.floor(Date.now() / 1000) - 600;
      const sent = await send(`${receiver}/stripe`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Stripe-Signature': `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${BODY}`).digest('hex')}`,
        },
        body: BODY,
      });
      expect(sent.status).toBe(200);
      const cli: CliRun = startCli(['forward', link, '--to', app.url]);
      try {
        await cli.waitFor('stderr', /joined endpoint/);
        const before = app.bodies.length;
        await openRow(page, 0);

        // Replay as captured: the local app's SDK refuses the old timestamp.
        await page.getByRole('button', { name: 'Replay', exact: true }).click();
        await expect.poll(() => replayStatus(page).textContent(), { timeout: 10_000 }).toMatch(/^400 in \d+ ms$/);
        expect(await page.locator('#detail .replay-output').textContent()).toMatch(/Original sender got200/);
        expect(await page.locator('#detail .replay-body').textContent()).toMatch(
          /Timestamp outside the tolerance zone/,
        );
        await cli.waitFor('stdout', /^replay of #1 POST \/stripe → 400 in \d+ ms$/m);
        // The log marks the request as replayed, apart from what a forward got: a replay is not a capture.
        expect(await page.locator('#log [role="option"] .replay-badge').textContent()).toBe('replayed ↻ 400');

        // Signed again in the page: passes; the page lists the header that changed.
        const form = replayForm(page);
        await form.getByLabel('Sign again with a fresh timestamp').check();
        expect(await form.getByLabel('Sender').inputValue()).toBe('stripe');
        await form.getByLabel('Signing secret (stays in this tab)').fill(SECRET);
        await form.getByRole('button', { name: 'Replay again' }).click();
        await expect.poll(() => replayStatus(page).textContent(), { timeout: 10_000 }).toMatch(/^200 in \d+ ms$/);
        expect(await page.locator('#detail .replay-changes').textContent()).toBe(
          'Headers changed by signing againStripe-Signature changed',
        );
        expect(await page.locator('#log [role="option"] .replay-badge').textContent()).toBe('replayed ↻ 200');
        await checkAxe(page);

        // Edit and replay: one JSON field changed, signed again; the app sees exactly that body.
        await page.getByRole('button', { name: 'Edit and replay' }).click();
        const edit = replayForm(page);
        const bodyField = edit.getByLabel('Body', { exact: true });
        expect(await bodyField.inputValue()).toBe(BODY);
        await bodyField.fill(BODY.replace('"amount":100', '"amount":250'));
        await edit.getByLabel('Sign again with a fresh timestamp').check();
        await edit.getByLabel('Signing secret (stays in this tab)').fill(SECRET);
        await checkAxe(page);
        await edit.getByRole('button', { name: 'Send edited replay' }).click();
        await expect.poll(() => replayStatus(page).textContent(), { timeout: 10_000 }).toMatch(/^200 in \d+ ms$/);
        expect(app.bodies.slice(before)).toEqual([BODY, BODY, BODY.replace('"amount":100', '"amount":250')]);
        // Replays are not captures: the log still holds the one request.
        expect(await page.locator('#log [role="option"]').count()).toBe(1);
        // The secret never left the tab: nothing the server logged holds it.
        expect(rig.server.logs()).not.toContain(SECRET);
      } finally {
        await cli.stop();
      }

      // No forwarder any more: the page says how to start one.
      await page.getByRole('button', { name: 'Replay', exact: true }).click();
      await expect
        .poll(() => page.locator('#detail .replay-output').textContent(), { timeout: 10_000 })
        .toMatch(/No hookwatch forward is connected/);
      expect(await page.locator('#detail .replay-command').textContent()).toBe(
        `npx hookwatch forward '${link}' --to http://localhost:3000/webhook`,
      );
      expect(await page.getByRole('button', { name: 'Copy as cURL' }).count()).toBeGreaterThan(0);
      await checkAxe(page);
      expect(errors).toEqual([]);
      await context.close();
    });
  }

  it('an edited replay of the largest body whose JSON escaping doubles it still goes (as base64), and the socket stays up', async () => {
    const view = SIZES[0] as (typeof SIZES)[number];
    const context = await viewContext(rig.browser, view);
    const { page, url: receiver, errors } = await openPage(context, rig.server.baseUrl);
    // 1 MiB (the live body cap) of quotes: 2 MiB once JSON-escaped, past the socket's 1.5 MiB frame limit as text.
    const body = '"'.repeat(1024 * 1024);
    expect(
      (await send(`${receiver}/big`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body })).status,
    ).toBe(200);
    const cli: CliRun = startCli(['forward', page.url(), '--to', app.url]);
    try {
      await cli.waitFor('stderr', /joined endpoint/);
      const before = app.bodies.length;
      await openRow(page, 0);
      await page.getByRole('button', { name: 'Edit and replay' }).click();
      await replayForm(page).getByRole('button', { name: 'Send edited replay' }).click();
      // The app refuses it (no Stripe signature), but it got all of it.
      await expect.poll(() => replayStatus(page).textContent(), { timeout: 15_000 }).toMatch(/^400 in \d+ ms$/);
      expect(app.bodies.slice(before)).toEqual([body]);
      expect(await page.getAttribute('#state', 'data-state')).toBe('live');
    } finally {
      await cli.stop();
    }
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
