import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { EndpointInfo } from '../../src/shared/protocol.js';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import { confirm, openPage, pairs, receiverUrl, rows, waitLive, serverAndBrowser } from './page-helpers.js';

const endpointId = (url: string) => url.slice(url.lastIndexOf('/') + 1);

describe.skipIf(!haveChromium)('the page with kept endpoints, without WebSockets, and with redacted headers', () => {
  const rig = serverAndBrowser();

  const newContext = (width = 1280) => rig.browser.newContext({ viewport: { width, height: width < 500 ? 844 : 800 } });

  /** A kept endpoint made over HTTP, as the CLI makes one. */
  async function createKept(): Promise<EndpointInfo> {
    const created = await send(`${rig.server.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind":"kept"}',
    });
    expect(created.status).toBe(201);
    return JSON.parse(created.text) as EndpointInfo;
  }

  /** Opens the page with the live socket refused before it opens, as a proxy without WebSocket support does; `allow()` lets sockets through again. */
  async function openWithoutSockets(
    context: BrowserContext,
    link: string,
  ): Promise<{ page: Page; errors: string[]; allow: () => void }> {
    let allowed = false;
    await context.routeWebSocket(/\/api\/live$/, (ws) => {
      if (allowed) ws.connectToServer();
      else void ws.close();
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    await page.goto(link);
    return { page, errors, allow: () => (allowed = true) };
  }

  it('makes a kept endpoint that outlives its tab: the share link reopens it later, with what arrived meanwhile and a countdown', async () => {
    const context = await newContext();
    const { page, url: liveUrl } = await openPage(context, rig.server.baseUrl);
    expect(await page.textContent('#endpoint-kind')).toBe('Live');
    expect(await page.textContent('#lifetime-text')).toBe(
      'lives while a tab watches it, then 0.5 s · keeps the newest 50 requests · bodies up to 1 MB',
    );
    expect(await page.getByRole('radio', { name: /Kept for 2 h/ }).isChecked()).toBe(false);

    await page.getByRole('radio', { name: /Kept for 2 h/ }).check();
    await page.click('#new-url');
    expect(await page.textContent('#confirm-text')).toContain('a new, empty kept endpoint (kept for 2 h)');
    await confirm(page);
    await waitLive(page, liveUrl);
    const keptUrl = await receiverUrl(page);
    expect(keptUrl).toMatch(new RegExp(`^${rig.server.baseUrl}/api/webhook-endpoint/[A-Za-z0-9_-]{21}$`));
    expect(await page.textContent('#endpoint-kind')).toBe('Kept');
    expect(await page.textContent('#lifetime-text')).toMatch(
      /^expires in 1 h 59 min \(.+ local\) · keeps the newest 50 requests · bodies up to 64 KB$/,
    );
    const shareLink = page.url();

    // The choice is remembered: the next page in this browser starts with a kept endpoint.
    const next = await openPage(context, rig.server.baseUrl);
    expect(next.url).toContain('/api/webhook-endpoint/');
    expect(await next.page.getByRole('radio', { name: /Kept for 2 h/ }).isChecked()).toBe(true);
    await next.page.close();

    // A live endpoint, left at the same moment, for comparison.
    const other = await newContext();
    const live = await openPage(other, rig.server.baseUrl);
    expect(live.url).toContain('/api/webhook-tester/');
    await Promise.all([context.close(), other.close()]);
    // Past the grace: the live one is gone, the kept one still takes requests.
    await expect.poll(async () => (await send(live.url)).status, { timeout: 5000, interval: 100 }).toBe(404);
    const sent = await send(`${keptUrl}/after-close`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"while":"nobody watched"}',
    });
    expect(sent.status).toBe(200);

    // Another browser opens the share link; its clock is the page's own, to run the countdown on.
    const later = await newContext(390);
    const reopened = await later.newPage();
    await reopened.clock.install();
    await reopened.goto(shareLink);
    await waitLive(reopened);
    expect(await receiverUrl(reopened)).toBe(keptUrl);
    await expect.poll(() => rows(reopened).count(), { timeout: 2000 }).toBe(1);
    expect(await rows(reopened).first().textContent()).toContain('/after-close');
    expect(await reopened.textContent('#endpoint-kind')).toBe('Kept');
    expect(await reopened.textContent('#lifetime-text')).toMatch(/^expires in 1 h 59 min /);
    expect(await reopened.textContent('header')).not.toContain('lives while');

    // The countdown: by the minute, then by the second in the last minute.
    const expiresAt = Date.parse((await rig.server.store.getEndpoint(endpointId(keptUrl)))?.expiresAt ?? '');
    await reopened.clock.pauseAt(Date.now() + 60_000);
    expect(await reopened.textContent('#lifetime-text')).toMatch(/^expires in 1 h 58 min /);
    await reopened.clock.setSystemTime(expiresAt - 30_500);
    await reopened.clock.runFor(1000);
    expect(await reopened.textContent('#lifetime-text')).toMatch(/^expires in 30 s /);
    await reopened.clock.runFor(1000);
    expect(await reopened.textContent('#lifetime-text')).toMatch(/^expires in 29 s /);
    await later.close();
  });

  it('polls the HTTP API every 3 s when WebSockets cannot connect, makes changes over it, and returns to live when sockets come back', async () => {
    const context = await newContext();
    const { page, errors, allow } = await openWithoutSockets(context, rig.server.baseUrl);
    await expect.poll(() => page.textContent('#state'), { timeout: 5000 }).toBe('No live connection');
    expect(await page.textContent('#retry-in')).toBe('checking every 3 s');
    // The endpoint was made over HTTP.
    const url = await receiverUrl(page);
    expect(url).toMatch(new RegExp(`^${rig.server.baseUrl}/api/webhook-tester/[A-Za-z0-9_-]{21}$`));
    expect(await page.textContent('#lifetime-text')).toContain('lives while a tab watches it');

    await send(`${url}/polled`, { method: 'POST', body: 'one' });
    await rows(page).first().waitFor({ timeout: 4500 });
    expect(await rows(page).first().textContent()).toContain('/polled');

    // The answer, over HTTP.
    await page.click('#response-toggle');
    await page.fill('#response-status', '418');
    await page.click('#response-form button[type=submit]');
    await expect.poll(() => page.textContent('#response-current'), { timeout: 2000 }).toBe('Senders get 418.');
    expect((await send(url, { method: 'POST', body: 'two' })).status).toBe(418);
    await expect.poll(() => rows(page).count(), { timeout: 4500 }).toBe(2);

    // Clear, over HTTP: the others watching are not counted without a socket.
    await page.click('#clear');
    expect(await page.textContent('#confirm-title')).toBe('Clear the log?');
    await confirm(page);
    await expect.poll(() => rows(page).count(), { timeout: 2000 }).toBe(0);
    expect((await rig.server.store.readLog(endpointId(url), 0))?.requests).toEqual([]);

    // Sockets get through again: "Try live now" returns to live, and requests arrive at once.
    allow();
    await page.click('#retry-now');
    await expect.poll(() => page.textContent('#state'), { timeout: 3000 }).toBe('Connected');
    expect(await receiverUrl(page)).toBe(url);
    expect(await page.locator('#retry-in').isHidden()).toBe(true);
    await send(`${url}/live-again`, { method: 'POST', body: 'three' });
    await expect.poll(() => rows(page).count(), { timeout: 1000 }).toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('joins a kept endpoint by its link without WebSockets, and says when polling finds it expired', async () => {
    const kept = await createKept();
    await send(`${kept.url}/before`, { method: 'POST', body: 'x' });
    const context = await newContext(390);
    const { page } = await openWithoutSockets(context, `${rig.server.baseUrl}/#${kept.id}.${kept.key}`);
    await expect.poll(() => page.textContent('#state'), { timeout: 5000 }).toBe('No live connection');
    expect(await receiverUrl(page)).toBe(kept.url);
    expect(await rows(page).count()).toBe(1);
    expect(await page.textContent('#endpoint-kind')).toBe('Kept');
    expect(await page.textContent('#lifetime-text')).toMatch(/^expires in 1 h 59 min /);

    expect(
      (
        await send(`${rig.server.baseUrl}/api/endpoints/${kept.id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${kept.key}` },
        })
      ).status,
    ).toBe(204);
    await page.locator('#expired').waitFor({ state: 'visible', timeout: 4500 });
    expect(await page.textContent('#state')).toBe('Expired');
    await context.close();
  });

  it('shows a redacted header as redacted, and that a kept endpoint cannot check signatures', async () => {
    const kept = await createKept();
    const context = await newContext();
    const { page } = await openPage(context, `${rig.server.baseUrl}/#${kept.id}.${kept.key}`);
    await send(`${kept.url}/github`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer x',
        'x-hub-signature-256': 'sha256=abc',
        'x-github-event': 'push',
        'content-type': 'application/json',
      },
      body: '{"ref":"main"}',
    });
    await rows(page).first().waitFor({ timeout: 2000 });
    const detail = page.locator('#detail');
    const authorization = detail.locator('table.pairs tr', {
      has: page.locator('th', { hasText: /^authorization$/i }),
    });
    expect(await authorization.locator('.redacted').textContent()).toBe('[redacted]');
    expect(await authorization.locator('.redacted-note').textContent()).toBe('redacted before storage');
    expect(await authorization.locator('.redacted-note').isVisible()).toBe(true);
    // Other headers read as they came.
    expect(await pairs(page, 1)).toContain('x-github-eventpush');
    expect(await detail.locator('.verify').textContent()).toContain(
      'Signatures cannot be checked on a kept endpoint: its signature header (x-hub-signature-256) was redacted before storage.',
    );
    expect(await detail.locator('.verify form').count()).toBe(0);
    await context.close();
  });

  it('names how many tabs watch in the Clear confirmation, and no one else when this tab is alone', async () => {
    const context = await newContext();
    const first = await openPage(context, rig.server.baseUrl);
    await send(first.url, { method: 'POST', body: 'x' });
    await rows(first.page).first().waitFor({ timeout: 2000 });
    const second = await openPage(context, first.page.url());
    const third = await openPage(context, first.page.url());

    await first.page.bringToFront();
    await expect
      .poll(
        async () => {
          await first.page.click('#clear');
          const title = await first.page.textContent('#confirm-title');
          await first.page.click('#confirm-cancel');
          return title;
        },
        { timeout: 3000 },
      )
      .toBe('Clear the log for all 3 tabs watching this endpoint?');

    await Promise.all([second.page.close(), third.page.close()]);
    await expect
      .poll(
        async () => {
          await first.page.click('#clear');
          const text = `${await first.page.textContent('#confirm-title')} ${await first.page.textContent('#confirm-text')}`;
          await first.page.click('#confirm-cancel');
          return text;
        },
        { timeout: 3000 },
      )
      .toBe('Clear the log? This removes the 1 request. It cannot be undone.');
    await context.close();
  });
});
