import { createHmac } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { EndpointInfo, ForwardedMessage } from '../../src/shared/protocol.js';
import { send } from '../helpers/http.js';
import { SocketClient } from '../helpers/socket-client.js';
import { haveChromium } from './browser.js';
import {
  checkAxe,
  confirm,
  openPage,
  openRow,
  receiverUrl,
  rows,
  VIEWS,
  viewContext,
  waitLive,
  serverAndBrowser,
} from './page-helpers.js';

const DAY = 24 * 3600_000;
/** One light view per size: 1280×800 and 390×844. */
const SIZES = VIEWS.filter((view) => view.colorScheme === 'light');

describe.skipIf(!haveChromium)('the page making kept endpoints: lifetime, name, secrets, Extend, and polling', () => {
  const rig = serverAndBrowser();

  /** Chooses the next kept URL's options and asks for it. */
  async function makeKept(
    page: Page,
    options: { lifetime: string; name?: string; keepSecrets?: boolean },
  ): Promise<void> {
    await page.getByRole('radio', { name: /^Kept for/ }).check();
    await page.getByLabel('Lifetime').selectOption({ label: options.lifetime });
    await page.getByLabel('URL name').fill(options.name ?? '');
    await page
      .getByLabel('Keep secrets as received (lets you verify signatures)')
      .setChecked(options.keepSecrets ?? false);
    await page.click('#new-url');
    await confirm(page);
  }

  for (const view of SIZES) {
    it(`${view.name}: makes a named kept URL with the chosen lifetime and secrets kept, says why a name is refused, and remembers the choice`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url: liveUrl, errors } = await openPage(context, rig.server.baseUrl);
      const name = `hook-${view.width}`;
      await makeKept(page, { lifetime: '1 day', name, keepSecrets: true });
      await waitLive(page, liveUrl);
      const keptUrl = await receiverUrl(page);
      expect(keptUrl).toBe(`${rig.server.baseUrl}/api/webhook-endpoint/${name}`);
      expect(await page.textContent('#endpoint-kind')).toBe('Kept');
      expect(await page.textContent('#lifetime-text')).toMatch(
        /^expires in 23 h 59 min \(.+ local\) · secrets kept as received · keeps the newest 50 requests · bodies up to 64 KB$/,
      );
      expect(await page.getByRole('radio', { name: /^Kept for 1 day/ }).isChecked()).toBe(true);
      const stored = await rig.server.store.getEndpoint(name);
      expect(Date.parse(stored?.expiresAt ?? '') - Date.now()).toBeGreaterThan(DAY - 60_000);
      // The name was used: the field is empty for the next one.
      expect(await page.getByLabel('URL name').inputValue()).toBe('');
      await checkAxe(page);

      // The same name again: the server's word next to the field, and this endpoint stays.
      await page.getByLabel('URL name').fill(name);
      await page.click('#new-url');
      await confirm(page);
      const note = page.locator('#kept-name-field-error');
      await note.waitFor({ state: 'visible', timeout: 3000 });
      expect(await note.textContent()).toBe(`The name ${name} is taken by a living endpoint; choose another`);
      expect(await page.getByLabel('URL name').getAttribute('aria-invalid')).toBe('true');
      expect(await receiverUrl(page)).toBe(keptUrl);
      expect(await page.getAttribute('#state', 'data-state')).toBe('live');
      await checkAxe(page);

      // A bad name: also the server's word; typing clears it.
      await page.getByLabel('URL name').fill('9-lives');
      await page.click('#new-url');
      await confirm(page);
      await expect.poll(() => note.textContent(), { timeout: 3000 }).toMatch(/name/);
      expect(await note.isVisible()).toBe(true);
      expect(await receiverUrl(page)).toBe(keptUrl);
      await page.getByLabel('URL name').fill('nine-lives');
      expect(await note.isVisible()).toBe(false);

      // The choice is remembered in this browser; a new tab goes back to the kept endpoint still alive (#34) rather than make another.
      const next = await openPage(context, rig.server.baseUrl);
      expect(next.url).toBe(keptUrl);
      // The refused creates are the browser's only complaints.
      expect(
        errors.filter(
          (error) => !/^Failed to load resource: the server responded with a status of (409|400)/.test(error),
        ),
      ).toEqual([]);
      expect(await next.page.getByLabel('Lifetime').inputValue()).toBe(String(DAY));
      expect(await next.page.getByLabel('Keep secrets as received (lets you verify signatures)').isChecked()).toBe(
        true,
      );
      expect(await next.page.textContent('#lifetime-text')).toMatch(
        /^expires in 23 h 59 min .* · secrets kept as received · /,
      );
      await context.close();
    });
  }

  for (const view of SIZES) {
    it(`${view.name}: Extend makes a kept endpoint live the chosen lifetime from now, in this tab and in others watching`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url: liveUrl } = await openPage(context, rig.server.baseUrl);
      await makeKept(page, { lifetime: '2 h' });
      await waitLive(page, liveUrl);
      expect(await page.textContent('#lifetime-text')).toMatch(/^expires in 1 h 59 min /);
      expect(await page.textContent('#lifetime-text')).not.toContain('secrets kept');
      const other = await openPage(context, page.url());
      await page.bringToFront();

      await page.getByLabel('Lifetime').selectOption({ label: '7 days' });
      const extend = page.getByRole('button', { name: 'Extend to 7 days' });
      expect(await extend.isVisible()).toBe(true);
      await checkAxe(page);
      await extend.click();
      await expect.poll(() => page.textContent('#lifetime-text'), { timeout: 3000 }).toMatch(/^expires in 6 d 23 h /);
      // The other tab heard `extended`.
      await expect
        .poll(() => other.page.textContent('#lifetime-text'), { timeout: 3000 })
        .toMatch(/^expires in 6 d 23 h /);
      const keptUrl = await receiverUrl(page);
      const id = keptUrl.split('/').at(-1) ?? '';
      expect(Date.parse((await rig.server.store.getEndpoint(id))?.expiresAt ?? '') - Date.now()).toBeGreaterThan(
        7 * DAY - 60_000,
      );

      // A live endpoint has nothing to extend.
      await page.getByRole('radio', { name: /^Live/ }).check();
      await page.click('#new-url');
      await confirm(page);
      await waitLive(page, keptUrl);
      expect(await page.locator('#extend').isHidden()).toBe(true);
      await context.close();
    });
  }

  it('shows forward results a poll brings when WebSockets cannot connect', async () => {
    const created = await send(`${rig.server.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind":"kept"}',
    });
    const kept = JSON.parse(created.text) as EndpointInfo;
    const forwarder = await SocketClient.join(rig.server.wsUrl, kept.id, kept.key);
    const report = (seq: number, status: number): ForwardedMessage => ({
      type: 'forwarded',
      seq,
      target: 'http://localhost:3000/hook',
      status,
      durationMs: 7,
      headers: [['Content-Type', 'text/plain']],
      body: 'ok',
      bodyEncoding: 'utf8',
      bodyTruncated: false,
    });
    await send(`${kept.url}/first`, { method: 'POST', body: 'one' });
    await forwarder.client.next('request');
    forwarder.client.send(report(1, 200));
    await forwarder.client.next('forwarded');

    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.routeWebSocket(/\/api\/live$/, (ws) => void ws.close());
    const page = await context.newPage();
    await page.goto(`${rig.server.baseUrl}/#${kept.id}.${kept.key}`);
    await expect.poll(() => page.textContent('#state'), { timeout: 5000 }).toBe('No live connection');
    await expect
      .poll(() => rows(page).first().locator('.fwd-badge').textContent(), { timeout: 5000 })
      .toBe('forwarded → 200');

    // A later poll: a new request and its result.
    await send(`${kept.url}/second`, { method: 'POST', body: 'two' });
    await forwarder.client.next('request');
    forwarder.client.send(report(2, 502));
    await forwarder.client.next('forwarded');
    await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(2);
    await expect
      .poll(() => rows(page).first().locator('.fwd-badge').textContent(), { timeout: 5000 })
      .toBe('forwarded → 502');
    await forwarder.client.close();
    await context.close();
  });

  it('as a new user: a kept URL named stripe-dev for 7 days with secrets kept checks a Stripe signature', async () => {
    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const { page, url: liveUrl, errors } = await openPage(context, rig.server.baseUrl);
    await makeKept(page, { lifetime: '7 days', name: 'stripe-dev', keepSecrets: true });
    await waitLive(page, liveUrl);
    const url = await receiverUrl(page);
    expect(url).toBe(`${rig.server.baseUrl}/api/webhook-endpoint/stripe-dev`);
    expect(await page.textContent('#lifetime-text')).toMatch(/^expires in 6 d 23 h .* · secrets kept as received · /);

    const secret = 'whsec_e2eStripeSecret123';
    const body = '{"id":"evt_1","type":"payment_intent.succeeded"}';
    const t = Math.floor(Date.now() / 1000);
    const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(
      (
        await send(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${v1}` },
          body,
        })
      ).status,
    ).toBe(200);
    await rows(page).first().waitFor({ timeout: 3000 });
    await openRow(page, 0);
    const panel = page.locator('#detail section.verify');
    expect(await panel.getByLabel('Sender').inputValue()).toBe('stripe');
    await panel.getByLabel('Secret', { exact: true }).fill(secret);
    await panel.getByRole('button', { name: 'Verify', exact: true }).click();
    await expect.poll(() => panel.locator('.verdict').textContent(), { timeout: 5000 }).toContain('Valid (Stripe)');
    expect(errors).toEqual([]);
    await context.close();
  });
});
