// A per-request delete (issue 34, item 1): from the open request's detail, after asking; it leaves
// the list in this tab and in every other tab watching, and the rest keep their numbers. At
// 1280×800 and 390×844, light and dark, axe clean.
import { describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import { checkAxe, confirm, openPage, openRow, rows, serverAndBrowser, VIEWS, viewContext } from './page-helpers.js';

describe.skipIf(!haveChromium)('deleting one request (issue 34)', () => {
  const rig = serverAndBrowser();

  for (const view of VIEWS) {
    it(`${view.name}: Delete in the detail asks, then the request leaves every tab watching`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      const second = await context.newPage();
      await second.goto(await page.evaluate(() => location.href));
      await second.waitForFunction(() => document.getElementById('state')?.dataset.state === 'live', undefined, {
        timeout: 5000,
      });
      for (let i = 1; i <= 3; i++) await send(`${url}/hook/${i}`, { method: 'POST', body: `{"n":${i}}` });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(3);
      await expect.poll(() => rows(second).count(), { timeout: 3000 }).toBe(3);

      await page.bringToFront();
      await openRow(page, 1);
      const button = page.getByRole('button', { name: 'Delete request #2' });
      await button.click();
      expect(await page.textContent('#confirm-text')).toContain('for everyone watching this endpoint');
      await checkAxe(page);
      await confirm(page);
      const paths = (tab: typeof page) => rows(tab).locator('.path').allTextContents();
      await expect.poll(() => paths(page), { timeout: 3000 }).toEqual(['/hook/3', '/hook/1']);
      await expect.poll(() => paths(second), { timeout: 3000 }).toEqual(['/hook/3', '/hook/1']);
      // Not counted as dropped: the list says nothing was lost.
      expect(await page.textContent('#count')).toBe('3 received');
      await checkAxe(page);

      // Gone on the server too: a reload shows the two left, numbered as before.
      await second.reload();
      await expect.poll(() => paths(second), { timeout: 3000 }).toEqual(['/hook/3', '/hook/1']);
      await context.close();
    });
  }
});
