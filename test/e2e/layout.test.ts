import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import { checkAxe, openPage, rows, serverAndBrowser } from './page-helpers.js';

/** No sideways scroll; the URL and its actions on screen; on narrow screens, 44 px touch targets. */
async function checkLayout(page: Page, width: number): Promise<void> {
  const report = await page.evaluate(() => {
    const inView = (id: string) => {
      const box = document.getElementById(id)?.getBoundingClientRect();
      return (
        !!box && box.width > 0 && box.left >= 0 && box.right <= innerWidth && box.top >= 0 && box.bottom <= innerHeight
      );
    };
    const url = document.getElementById('receiver-url') as HTMLElement;
    const small = [
      ...document.querySelectorAll<HTMLElement>('button, input, select, textarea, [role="option"], [role="tab"]'),
    ]
      .filter((element) => element.checkVisibility() && !element.closest('.offscreen'))
      .map((element) => ({ element, box: element.getBoundingClientRect() }))
      .filter(({ box }) => box.width < 44 || box.height < 44)
      .map(
        ({ element, box }) =>
          `${element.id || element.className || element.tagName} ${Math.round(box.width)}x${Math.round(box.height)}`,
      );
    return {
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth,
      urlClipped: url.scrollWidth > url.clientWidth,
      inView: {
        copyUrl: inView('copy-url'),
        copyShare: inView('copy-share'),
        newUrl: inView('new-url'),
        state: inView('state'),
      },
      small,
    };
  });
  expect(report.scrollWidth).toBeLessThanOrEqual(report.innerWidth);
  expect(report.urlClipped).toBe(false);
  expect(report.inView).toEqual({ copyUrl: true, copyShare: true, newUrl: true, state: true });
  if (width < 880) expect(report.small).toEqual([]);
}

describe.skipIf(!haveChromium)('the page at phone, tablet and desktop widths', () => {
  const rig = serverAndBrowser();

  for (const width of [390, 768, 1280]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`${width} px, ${colorScheme}: no sideways scroll, the URL in view and one tap from copying, no axe violations`, async () => {
        // bypassCSP only so that axe's script can be injected; the page runs as served otherwise.
        const context = await rig.browser.newContext({
          viewport: { width, height: width < 500 ? 844 : 800 },
          colorScheme,
          bypassCSP: true,
        });
        const { page, url } = await openPage(context, rig.server.baseUrl);
        expect(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(
          colorScheme === 'dark',
        );
        await checkLayout(page, width);
        await checkAxe(page);

        const json = JSON.stringify({
          event: 'order.paid',
          empty: [],
          order: { id: 7, lines: [{ sku: 'A-1', qty: 2 }], note: null },
        });
        await send(`${url}/hooks/orders?source=shop&attempt=1`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-signature': 'sha256=abc' },
          body: json,
        });
        await send(`${url}/form`, {
          method: 'PUT',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'name=Ada&lang=en',
        });
        await expect.poll(() => rows(page).count(), { timeout: 2000 }).toBe(2);
        await checkLayout(page, width);
        await checkAxe(page);

        // Open the JSON request. Narrow screens show it instead of the list, with a way back.
        await rows(page).nth(1).click();
        await page.locator('#detail .json-tree').waitFor({ timeout: 2000 });
        const back = page.locator('#back-to-list');
        expect(await back.isVisible()).toBe(width < 880);
        expect(await page.locator('#log').isVisible()).toBe(width >= 880);
        await page.evaluate(() => scrollTo(0, 0));
        await checkLayout(page, width);
        await checkAxe(page);
        if (width < 880) {
          const detailWidth = await page
            .locator('#detail')
            .evaluate((element) => element.getBoundingClientRect().width);
          expect(detailWidth).toBe(width);
          await back.click();
          await page.locator('#log').waitFor({ state: 'visible', timeout: 2000 });
          expect(await page.locator('#detail').isVisible()).toBe(false);
        }
        await context.close();
      });
    }
  }
});
