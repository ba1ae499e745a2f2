// The page's room and its header (issue 25): the request list has space, the answer form folds to
// one line, the connection is named apart from the endpoint's kind, an expired link shows a clean
// page, and the header does not move while reconnecting.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { SocketClient } from '../helpers/socket-client.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { haveChromium, launchChromium } from './browser.js';
import {
  checkAxe,
  openPage,
  receiverUrl,
  rows,
  switchableNetwork,
  VIEWS,
  viewContext,
  waitLive,
} from './page-helpers.js';

/** Rows wholly on screen: inside the list's own box (it scrolls on wide screens) and the viewport. */
function rowsInView(page: Page): Promise<number> {
  return page.evaluate(() => {
    const list = document.getElementById('log') as HTMLElement;
    const box = list.getBoundingClientRect();
    const top = Math.max(0, box.top);
    const bottom = Math.min(innerHeight, box.bottom);
    return [...list.querySelectorAll('[role="option"]')].filter((row) => {
      const rect = row.getBoundingClientRect();
      return rect.height > 0 && rect.top >= top - 0.5 && rect.bottom <= bottom + 0.5;
    }).length;
  });
}

describe.skipIf(!haveChromium)('room for the log, and a header that says what it means (issue 25)', () => {
  let server: TestServer;
  /** Keeps an unwatched endpoint for 30 s: long enough to reconnect to it. */
  let patient: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startServer({ graceMs: 500, logLevel: 'warn' });
    patient = await startServer({ graceMs: 30_000, logLevel: 'warn' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([server?.close(), patient?.close()]);
  });

  for (const view of VIEWS) {
    it(`${view.name}: shows at least 10 of 20 requests at 1280×800, the answer folded to one line, a wider sidebar on wide screens`, async () => {
      const context = await viewContext(browser, view);
      const { page, url } = await openPage(context, server.baseUrl);
      for (let i = 1; i <= 20; i++)
        await send(`${url}/hooks/orders/${i}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: `{"n":${i}}`,
        });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(20);

      // The answer is set: its settings are folded into one line that says it.
      const toggle = page.locator('#response-toggle');
      expect(await toggle.getAttribute('aria-expanded')).toBe('false');
      expect((await toggle.textContent())?.trim()).toBe('Answer: 200 application/json, no delay');
      expect(await page.locator('#response-status').isVisible()).toBe(false);

      if (view.width >= 880) {
        expect(await rowsInView(page)).toBeGreaterThanOrEqual(10);
        // Reading an older request while new ones arrive: the "new" cue shows, and the list keeps its room.
        await rows(page).nth(8).click();
        await send(`${url}/hooks/orders/21`, { method: 'POST', body: 'x' });
        await page.locator('#jump-latest').waitFor({ state: 'visible', timeout: 2000 });
        expect(await rowsInView(page)).toBeGreaterThanOrEqual(10);
      }

      // Unfolded, the settings show; folded again, the list gets its room back.
      await toggle.click();
      expect(await toggle.getAttribute('aria-expanded')).toBe('true');
      expect(await page.locator('#response-status').isVisible()).toBe(true);
      expect(await page.inputValue('#response-status')).toBe('200');
      await checkAxe(page);
      await toggle.click();
      expect(await page.locator('#response-status').isVisible()).toBe(false);

      if (view.width >= 880) {
        const sidebar = () => page.locator('.sidebar').evaluate((element) => element.getBoundingClientRect().width);
        expect(await sidebar()).toBeCloseTo(422, -1);
        await page.setViewportSize({ width: 1920, height: 1080 });
        // Paths are no longer cut at 420 px: the sidebar takes a third of a wide screen.
        expect(await sidebar()).toBeGreaterThan(600);
      }
      await checkAxe(page);
      await context.close();
    });

    it(`${view.name}: names the connection "Connected", apart from the URL's kind, and the kind choice as the next URL's`, async () => {
      const context = await viewContext(browser, view);
      const { page } = await openPage(context, server.baseUrl);
      expect(await page.textContent('#state')).toBe('Connected');
      expect(await page.textContent('#endpoint-kind')).toBe('Live');
      // Nothing in the connection's corner says "Live": that word names a kind of URL.
      expect(await page.locator('.connection').innerText()).not.toMatch(/live/i);
      const choice = page.getByRole('group', { name: 'Next new URL' });
      expect(await choice.getByRole('radio', { name: /^Live/ }).isChecked()).toBe(true);
      expect(await choice.getByRole('radio', { name: /^Kept for 2 h/ }).isChecked()).toBe(false);
      await checkAxe(page);
      await context.close();
    });

    it(`${view.name}: an expired share link shows a clean page: no joining text, no Try box, no answer form, no other endpoint's URL`, async () => {
      const watcher = await SocketClient.create(server.wsUrl);
      const { endpoint } = watcher.welcome;
      const link = `${server.baseUrl}/#${endpoint.id}.${endpoint.key}`;
      await watcher.client.close();
      await expect.poll(async () => (await send(endpoint.url)).status, { timeout: 3000, interval: 100 }).toBe(404);

      const context = await viewContext(browser, view);
      const check = async (page: Page, otherUrl?: string) => {
        await page.locator('#expired').waitFor({ state: 'visible', timeout: 3000 });
        expect(await page.textContent('#state')).toBe('Expired');
        const url = await receiverUrl(page);
        expect(url).not.toMatch(/joining|creating/);
        expect(await page.locator('#empty').innerText()).not.toContain('Try:');
        expect(await page.locator('#empty-curl').isVisible()).toBe(false);
        // No answer form to fill in for an endpoint that is gone.
        expect(await page.locator('#response-form').isVisible()).toBe(false);
        if (otherUrl) expect(await page.locator('body').innerText()).not.toContain(otherUrl);
        await checkAxe(page);
      };

      // Opened straight from the link.
      const fresh = await context.newPage();
      await fresh.goto(link);
      await check(fresh);
      await fresh.close();

      // A tab that watched another endpoint follows the link.
      const { page, url: other } = await openPage(context, server.baseUrl);
      await page.evaluate((hash) => (location.hash = hash), `#${endpoint.id}.${endpoint.key}`);
      await check(page, other);
      await context.close();
    });

    it(`${view.name}: keeps the header still while reconnecting: the URL box and the lifetime line do not move or wrap`, async () => {
      const context = await viewContext(browser, view);
      const page = await context.newPage();
      const network = await switchableNetwork(page);
      await page.goto(patient.baseUrl);
      await waitLive(page);
      const boxes = () =>
        page.evaluate(() =>
          ['receiver-url', 'lifetime', 'copy-url', 'new-url'].map((id) => {
            const box = (document.getElementById(id) as HTMLElement).getBoundingClientRect();
            return `${id} ${Math.round(box.left)},${Math.round(box.top)} ${Math.round(box.width)}x${Math.round(box.height)}`;
          }),
        );
      const before = await boxes();

      await network.down();
      await expect.poll(() => page.textContent('#state'), { timeout: 2000 }).toBe('Reconnecting…');
      await page.locator('#retry-now').waitFor({ state: 'visible', timeout: 2000 });
      await expect.poll(() => page.textContent('#retry-in'), { timeout: 5000 }).toMatch(/^next try in \d+ s$/);
      expect(await boxes()).toEqual(before);
      await checkAxe(page);

      network.up();
      // Between attempts: at once. During one (the button is disabled then), that attempt gets through.
      await page
        .locator('#retry-now')
        .click({ timeout: 1000 })
        .catch(() => undefined);
      await waitLive(page);
      expect(await boxes()).toEqual(before);
      await context.close();
    });
  }
});
