// Exact values in the page (issue 34, items 4, 6, 7, 8): numbers in the JSON tree as sent, the
// filter through multipart fields beside a binary file, a header line without a colon marked, and
// copying a cut body's cURL saying so. At a laptop's and a phone's size, light and dark, axe clean.
import { describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import { checkAxe, openPage, openRow, rows, serverAndBrowser, VIEWS, viewContext } from './page-helpers.js';

describe.skipIf(!haveChromium)('exact values (issue 34)', () => {
  const rig = serverAndBrowser();

  for (const view of VIEWS) {
    it(`${view.name}: the JSON tree shows every number as it was sent`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      await send(`${url}/stripe`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"id":1234567890123456789,"amount":19.90,"k":1e3,"z":-0}',
      });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(1);
      const opened = await openRow(page, 0);
      await page.locator('#detail .json-tree').waitFor({ timeout: 2000 });
      expect(await page.locator('#detail .json-tree .json-number').allTextContents()).toEqual([
        '1234567890123456789',
        '19.90',
        '1e3',
        '-0',
      ]);
      await checkAxe(page);
      await opened.close();
      await context.close();
    });

    it(`${view.name}: the filter finds a multipart field's text when another part is a binary file`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      const boundary = 'XyZ';
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="comment"\r\n\r\nInvoice-Ref 4242\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        ),
        Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x81]),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      await send(`${url}/upload`, {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      });
      await send(`${url}/other`, { method: 'POST', body: 'nothing here' });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(2);
      await page.fill('#filter', 'invoice-ref 4242');
      await expect.poll(() => rows(page).locator('.path').allTextContents(), { timeout: 2000 }).toEqual(['/upload']);
      await checkAxe(page);
      await context.close();
    });

    it(`${view.name}: a header line with no colon is marked, not applied`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      await page.click('#response-toggle');
      await page.fill('#response-headers', 'Retry-After: 5\nNoColonHere');
      await page.click('#response-form button[type="submit"]');
      await expect
        .poll(() => page.locator('#response-headers-error').textContent(), { timeout: 2000 })
        .toMatch(/^Line 2 has no colon/);
      expect(await page.getAttribute('#response-headers', 'aria-invalid')).toBe('true');
      expect(await page.isVisible('#response-unsaved')).toBe(true);
      const answer = await send(url, { method: 'POST', body: 'x' });
      expect(answer.headers['noColonHere'.toLowerCase()]).toBeUndefined();
      expect(answer.headers['retry-after']).toBeUndefined();
      await checkAxe(page);
      await context.close();
    });

    it(`${view.name}: a rule's JSON answer that will not parse is warned about, and {{json:…}} is offered`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page } = await openPage(context, rig.server.baseUrl);
      await page.click('#response-toggle');
      await page.click('#rules-toggle');
      await page.click('#rule-add');
      const rule = page.locator('#rules-list li').first();
      const body = rule.getByLabel('Body', { exact: true });
      await body.fill('{"nested":{{json.obj}}}');
      const warning = rule.locator('.field-warning');
      await expect
        .poll(() => warning.textContent(), { timeout: 2000 })
        .toMatch(/^Not valid JSON once its placeholders are filled in: .*\{\{json:<path>\}\}/);
      await checkAxe(page);
      await body.fill('{"nested":{{json:obj}}}');
      await expect.poll(() => warning.isVisible(), { timeout: 2000 }).toBe(false);
      // The default answer too, as written.
      await page.fill('#response-body', '{"ok":tru}');
      await expect
        .poll(() => page.locator('#response-body-warning').textContent(), { timeout: 2000 })
        .toMatch(/^Not valid JSON: /);
      await context.close();
    });

    it(`${view.name}: copying a cut body's cURL says so at once`, async () => {
      const context = await viewContext(rig.browser, view);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: rig.server.baseUrl });
      const { page, url } = await openPage(context, rig.server.baseUrl);
      await send(`${url}/big`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'a'.repeat(2 * 1024 * 1024),
      });
      await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(1);
      const opened = await openRow(page, 0);
      await page.locator('#detail button', { hasText: 'Copy as cURL' }).click();
      await expect
        .poll(() => page.textContent('#toast'), { timeout: 2000 })
        .toBe('cURL command copied; the body was cut: it sends the first 1.0 MB of 2.0 MB the sender sent');
      await opened.close();
      await context.close();
    });
  }
});
