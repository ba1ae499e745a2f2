// Room to work (issue 34, items 10-14): a header that leaves the screen to the log (at most a fifth
// of a desktop's height, a third of a phone's; the URL on one line at 1280 px; the kept options
// only when Kept is chosen), whole paths in the list, the answer form beside the list when open,
// the counts Apply resets said before applying, and the Verify result brought into view.
import { createHmac } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import { checkAxe, openPage, openRow, rows, serverAndBrowser, type View, VIEWS, viewContext } from './page-helpers.js';

const headerHeight = (page: Page) =>
  page.evaluate(() => (document.querySelector('header.top') as HTMLElement).getBoundingClientRect().height);

/** The URL's box: whole (never clipped), and on one line on a desktop. */
async function checkUrl(page: Page, desktop: boolean): Promise<void> {
  const box = await page.locator('#receiver-url').evaluate((element) => ({
    height: element.getBoundingClientRect().height,
    clipped: element.scrollWidth > element.clientWidth,
  }));
  expect(box.clipped).toBe(false);
  if (desktop) expect(box.height).toBeLessThan(40);
}

/** The views of every test, and a small laptop's 1024×768: the narrowest desktop layout. */
const HEADER_VIEWS: View[] = [
  ...VIEWS,
  ...(['light', 'dark'] as const).map((colorScheme) => ({
    width: 1024,
    height: 768,
    colorScheme,
    name: `1024 px, ${colorScheme}`,
  })),
];

describe.skipIf(!haveChromium)('room to work (issue 34)', () => {
  const rig = serverAndBrowser();

  for (const view of HEADER_VIEWS) {
    const desktop = view.width >= 880;
    const budget = view.height / (desktop ? 5 : 3);
    it(`${view.name}: the header takes at most ${desktop ? 'a fifth' : 'a third'} of the height with Live or Kept chosen, the URL ${desktop ? 'on one line' : 'whole'}, kept options only for Kept; paths read whole`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      expect(await headerHeight(page)).toBeLessThanOrEqual(budget);
      await checkUrl(page, desktop);
      expect(await page.isVisible('#kept-options')).toBe(false);
      await page.getByRole('radio', { name: /^Kept for/ }).check();
      expect(await page.isVisible('#kept-options')).toBe(true);
      expect(await headerHeight(page)).toBeLessThanOrEqual(budget);
      await checkUrl(page, desktop);
      await checkAxe(page);
      await page.getByRole('radio', { name: /^Live/ }).check();
      expect(await page.isVisible('#kept-options')).toBe(false);

      for (let i = 1; i <= 3; i++) await send(`${url}/github/push?delivery=${i}`, { method: 'POST', body: '{}' });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(3);
      const paths = await rows(page)
        .locator('.path')
        .evaluateAll((spans) =>
          spans.map((span) => ({ text: span.textContent, cut: span.scrollWidth > span.clientWidth })),
        );
      expect(paths).toEqual([3, 2, 1].map((i) => ({ text: `/github/push?delivery=${i}`, cut: false })));
      await checkAxe(page);
      await context.close();
    });
  }

  for (const view of HEADER_VIEWS.filter((each) => each.width < 1100)) {
    it(`${view.name}: the kept options open under the header when Kept is chosen, and fold and open again from the keyboard`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page } = await openPage(context, rig.server.baseUrl);
      const panel = page.locator('#kept-options');
      const toggle = page.getByRole('button', { name: 'Kept URL options' });
      const focused = () => page.evaluate(() => document.activeElement?.id);
      expect(await toggle.isVisible()).toBe(false);
      await page.getByRole('radio', { name: /^Kept for/ }).check();
      expect(await toggle.getAttribute('aria-expanded')).toBe('true');
      // The panel covers neither the header nor New URL.
      const header = await page.locator('header.top').boundingBox();
      const box = await panel.boundingBox();
      expect(box && header && box.y >= header.y + header.height).toBe(true);

      await page.getByLabel('Lifetime').focus();
      await page.keyboard.press('Escape');
      expect(await panel.isVisible()).toBe(false);
      expect(await focused()).toBe('kept-toggle');
      expect(await toggle.getAttribute('aria-expanded')).toBe('false');
      await checkAxe(page);

      await page.keyboard.press('Enter');
      expect(await panel.isVisible()).toBe(true);
      await page.keyboard.press('Tab');
      expect(await focused()).toBe('kept-ttl');
      await page.keyboard.press('ArrowDown');
      expect(await page.textContent('#kept-name')).toBe('Kept for 1 day');
      for (const id of ['kept-name-field', 'keep-secrets', 'kept-done']) {
        await page.keyboard.press('Tab');
        expect(await focused()).toBe(id);
      }
      await page.keyboard.press('Enter');
      expect(await panel.isVisible()).toBe(false);
      expect(await focused()).toBe('kept-toggle');
      await context.close();
    });
  }

  for (const view of VIEWS.filter((each) => each.width >= 880)) {
    it(`${view.name}: the open answer form sits beside the list, which keeps its rows; Apply says which counts it resets`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      for (let i = 1; i <= 20; i++) await send(`${url}/hooks/${i}`, { method: 'POST', body: `{"n":${i}}` });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(20);
      const rowsInView = () =>
        rows(page).evaluateAll(
          (all) =>
            all.filter((row) => {
              const box = row.getBoundingClientRect();
              const list = (document.getElementById('log') as HTMLElement).getBoundingClientRect();
              return box.top >= list.top && box.bottom <= list.bottom;
            }).length,
        );
      expect(await rowsInView()).toBeGreaterThanOrEqual(10);
      await page.click('#response-toggle');
      await page.click('#rules-toggle');
      await page.selectOption('#rule-preset', { label: 'Fail N times, then succeed' });
      await page.fill('#rule-parameter', '3');
      await page.click('#rule-preset-add');
      const form = await page.locator('#response-form').boundingBox();
      const sidebar = await page.locator('.sidebar').boundingBox();
      expect(form && sidebar && form.x >= sidebar.x + sidebar.width - 2).toBe(true);
      expect(form?.width).toBeGreaterThan(400);
      expect(await rowsInView()).toBeGreaterThanOrEqual(10);
      await checkAxe(page);

      // Applied: the count runs; an edit says before Apply that it starts again.
      await page.click('#response-form button[type=submit]');
      await expect.poll(() => page.locator('#response-toggle').textContent(), { timeout: 3000 }).toMatch(/· 1 rule$/);
      expect((await send(url, { method: 'POST', body: 'x' })).status).toBe(503);
      await page.click('#response-toggle');
      expect(await page.isVisible('#response-resets')).toBe(false);
      await page.fill('#response-body', '{"ok":"edited"}');
      await expect
        .poll(() => page.locator('#response-resets').textContent(), { timeout: 2000 })
        .toBe('Applying starts this count again: “fail 3 times first” (first 3) will answer its first matches again.');
      await checkAxe(page);
      await context.close();
    });
  }

  it('1280×800: the Verify result is brought into view', async () => {
    const context = await viewContext(rig.browser, VIEWS[0]!);
    const { page, url } = await openPage(context, rig.server.baseUrl);
    const secret = 'room-secret';
    const body = JSON.stringify({
      action: 'opened',
      padding: 'x'.repeat(300),
      items: Array.from({ length: 40 }, (_, i) => ({ i })),
    });
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-hub-signature-256': signature,
    };
    for (let i = 0; i < 12; i++) headers[`x-extra-${i}`] = `value ${i}`;
    await send(`${url}/github`, { method: 'POST', headers, body });
    await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(1);
    await openRow(page, 0);
    const panel = page.locator('#detail section.verify');
    await panel.getByLabel('Secret', { exact: true }).fill(secret);
    await panel.getByRole('button', { name: 'Verify', exact: true }).click();
    const verdict = panel.locator('.verdict');
    await expect.poll(() => verdict.textContent(), { timeout: 5000 }).toContain('Valid (GitHub)');
    await expect
      .poll(
        () =>
          verdict.evaluate((element) => {
            const box = element.getBoundingClientRect();
            return box.top >= 0 && box.bottom <= innerHeight && box.height > 0;
          }),
        { timeout: 2000 },
      )
      .toBe(true);
    await context.close();
  });
});
