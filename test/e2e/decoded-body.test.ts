// Compressed bodies decoded in the page, marked as decoded (issue 34, item 9), and the XML view
// loaded when first needed (item 18). At 1280×800 and 390×844, light and dark, axe clean.
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import { checkAxe, openPage, openRow, rows, serverAndBrowser, VIEWS, viewContext } from './page-helpers.js';

describe.skipIf(!haveChromium)('compressed bodies (issue 34)', () => {
  const rig = serverAndBrowser();

  for (const view of VIEWS) {
    it(`${view.name}: a gzip body shows decoded, marked so, and its bytes in Raw; a bomb is cut; br says why not`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url, errors } = await openPage(context, rig.server.baseUrl);
      const json = '{"id":1234567890123456789,"event":"order.paid"}';
      await send(`${url}/gz`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: gzipSync(json),
      });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(1);
      let opened = await openRow(page, 0);
      const panel = page.locator('#detail [role="tabpanel"]:not([hidden])');
      await panel.locator('.decoded-note').waitFor({ timeout: 3000 });
      expect(await page.locator('#detail [role="tab"][aria-selected="true"]').textContent()).toBe('Decoded');
      expect(await panel.locator('.decoded-note').textContent()).toMatch(
        /^Decoded from gzip: 47 B from the \d+ B stored\.$/,
      );
      expect(await panel.locator('.json-number').allTextContents()).toEqual(['1234567890123456789']);
      expect(await page.locator('#detail h3', { hasText: /^Body/ }).textContent()).toMatch(/^Body \(gzip-compressed, /);
      await checkAxe(page);
      await opened.close();

      await send(`${url}/bomb`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' },
        body: gzipSync(Buffer.alloc(32 * 1024 * 1024, 'a')),
      });
      await send(`${url}/br`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'content-encoding': 'br' },
        body: brotliCompressSync('hello'),
      });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(3);
      opened = await openRow(page, 1);
      await expect
        .poll(() => panel.locator('.decoded-note').textContent(), { timeout: 5000 })
        .toContain('Cut at 1.0 MB: the decoded body is larger.');
      await opened.close();
      opened = await openRow(page, 0);
      await expect
        .poll(() => panel.textContent(), { timeout: 3000 })
        .toMatch(/^Not decoded: this browser cannot decode Brotli \(br\) bodies|^Decoded from br/);
      await opened.close();
      expect(errors).toEqual([]);
      await context.close();
    });
  }
});
