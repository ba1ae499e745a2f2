// "Your endpoints" (issue 34, item 1): the page keeps the endpoints this browser made or joined,
// with their keys; a visit to `/` goes back to the last kept one still alive instead of making
// another; each can be reopened, forgotten or deleted. At 1280×800 and 390×844, light and dark.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import {
  checkAxe,
  confirm,
  openPage,
  receiverUrl,
  rows,
  serverAndBrowser,
  VIEWS,
  viewContext,
  waitLive,
} from './page-helpers.js';

const items = (page: Page) => page.locator('#endpoints-list li');

describe.skipIf(!haveChromium)('the list of your endpoints (issue 34)', () => {
  const rig = serverAndBrowser();

  for (const view of VIEWS) {
    it(`${view.name}: a visit to / reopens the kept endpoint; the list reopens, forgets and deletes`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url: liveUrl } = await openPage(context, rig.server.baseUrl);
      await page.getByRole('radio', { name: /^Kept for/ }).check();
      await page.click('#new-url');
      await confirm(page);
      await waitLive(page, liveUrl);
      const keptUrl = await receiverUrl(page);
      expect(keptUrl).toContain('/api/webhook-endpoint/');
      await send(`${keptUrl}/one`, { method: 'POST', body: 'x' });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(1);
      // Another visit to / in this browser: the same kept endpoint, with its request, and no new one made.
      const creates: string[] = [];
      context.on(
        'request',
        (request) =>
          request.method() === 'POST' && request.url().endsWith('/api/endpoints') && creates.push(request.url()),
      );
      const again = await openPage(context, rig.server.baseUrl);
      expect(again.url).toBe(keptUrl);
      await expect.poll(() => rows(again.page).count(), { timeout: 3000 }).toBe(1);
      expect(creates).toEqual([]);
      await again.page.close();

      // The list: the kept one (this tab's) and the live one before it.
      await page.bringToFront();
      await page.click('#endpoints-open');
      await items(page).first().waitFor({ timeout: 3000 });
      const keptId = keptUrl.split('/').at(-1) ?? '';
      const liveId = liveUrl.split('/').at(-1) ?? '';
      expect(await items(page).allInnerTexts()).toEqual([
        expect.stringMatching(new RegExp(`^${keptId} \\(this tab\\)\\s+Kept · expires in 1 h 59 min · 1 request`)),
        expect.stringMatching(new RegExp(`^${liveId}\\s+Live · while a tab watches it · 0 requests`)),
      ]);
      await checkAxe(page);

      // Reopen the live one (gone by now: the grace is 0.5 s) from the list: it says it expired, and is forgotten.
      await items(page)
        .nth(1)
        .getByRole('button', { name: `Open ${liveId}` })
        .click();
      await page.locator('#expired').waitFor({ state: 'visible', timeout: 3000 });
      await page.click('#endpoints-open');
      await expect.poll(() => items(page).count(), { timeout: 2000 }).toBe(1);

      // Back to the kept one; then delete it: its URL answers 404, and it leaves the list.
      await items(page)
        .first()
        .getByRole('button', { name: `Open ${keptId}` })
        .click();
      await expect.poll(() => receiverUrl(page), { timeout: 3000 }).toBe(keptUrl);
      await waitLive(page);
      await page.click('#endpoints-open');
      await items(page)
        .first()
        .getByRole('button', { name: `Delete ${keptId}` })
        .click();
      expect(await page.textContent('#confirm-text')).toContain('its 1 request');
      await confirm(page);
      await expect.poll(async () => (await send(keptUrl)).status, { timeout: 3000 }).toBe(404);
      await expect.poll(() => items(page).count(), { timeout: 3000 }).toBe(0);
      expect(await page.isVisible('#endpoints-empty')).toBe(true);
      await page.click('#endpoints-close');
      await page.locator('#expired').waitFor({ state: 'visible', timeout: 3000 });
      await checkAxe(page);

      // Nothing alive on the list: a visit to / makes a new endpoint.
      const fresh = await openPage(context, rig.server.baseUrl);
      expect(fresh.url).not.toBe(keptUrl);
      await context.close();
    });
  }

  it('a visit to / makes a new endpoint when the last kept one was deleted elsewhere; Forget leaves the endpoint alive', async () => {
    const context = await viewContext(rig.browser, VIEWS[0]!);
    const { page, url: liveUrl } = await openPage(context, rig.server.baseUrl);
    await page.getByRole('radio', { name: /^Kept for/ }).check();
    await page.click('#new-url');
    await confirm(page);
    await waitLive(page, liveUrl);
    const keptUrl = await receiverUrl(page);
    const [id, key] = new URL(page.url()).hash.slice(1).split('.') as [string, string];

    // Forget: off the list, the endpoint stays.
    await page.click('#endpoints-open');
    await page.getByRole('button', { name: `Forget ${id}` }).click();
    await expect.poll(() => page.locator('#endpoints-list li').count(), { timeout: 2000 }).toBe(1);
    expect((await send(keptUrl)).status).toBe(200);
    await page.click('#endpoints-close');
    // This tab watches it still: a reload lists it again.
    await page.reload();
    await waitLive(page);
    await page.close();

    expect(
      (
        await send(`${rig.server.baseUrl}/api/endpoints/${id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${key}` },
        })
      ).status,
    ).toBe(204);
    const next = await openPage(context, rig.server.baseUrl);
    expect(next.url).not.toBe(keptUrl);
    expect(next.url).toContain('/api/webhook-endpoint/');
    await context.close();
  });
});
