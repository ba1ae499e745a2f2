// The answer form's errors (issue 25): each refused field is marked, with a message in words next
// to it, instead of the server's wording in a toast that goes away.
import { describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import { checkAxe, openPage, VIEWS, viewContext, serverAndBrowser } from './page-helpers.js';

describe.skipIf(!haveChromium)('the answer form (issue 25)', () => {
  const rig = serverAndBrowser();

  for (const view of VIEWS) {
    it(`${view.name}: marks each field the server refused, says why in words next to it, and clears the marks once applied`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      await page.click('#response-toggle');
      await page.fill('#response-status', '302');
      await page.fill('#response-headers', 'X-Ok: 1\nSet-Cookie: session=abc');
      await page.fill('#response-delay', '250');
      await page.click('#response-form button[type=submit]');

      const described = async (id: string) => {
        const field = page.locator(`#${id}`);
        await expect.poll(() => field.getAttribute('aria-invalid'), { timeout: 3000 }).toBe('true');
        const ids = (await field.getAttribute('aria-describedby'))?.split(/\s+/) ?? [];
        const messages = [];
        for (const messageId of ids) {
          const message = page.locator(`#${messageId}`);
          if ((await message.getAttribute('class'))?.includes('field-error')) {
            expect(await message.isVisible()).toBe(true);
            messages.push((await message.innerText()).trim());
          }
        }
        return messages;
      };
      expect(await described('response-headers')).toEqual([
        "Header 2: Set-Cookie can't be set here: Hookwatch never lets an answer set cookies.",
      ]);
      expect(await described('response-status')).toEqual(["Status 302 can't be used: choose 200–299 or 400–599."]);
      // Delay was fine: not marked.
      expect(await page.getAttribute('#response-delay', 'aria-invalid')).toBeNull();
      // Nothing was applied: senders still get the old answer.
      expect((await send(url, { method: 'POST', body: 'x' })).status).toBe(200);
      // The message stays (it is not a toast).
      await page.waitForTimeout(2500);
      expect(await page.locator('#response-headers-error').isVisible()).toBe(true);
      await checkAxe(page);

      // Editing a field takes its mark away; applying a good answer takes them all away.
      await page.fill('#response-headers', 'X-Ok: 1');
      expect(await page.getAttribute('#response-headers', 'aria-invalid')).toBeNull();
      expect(await page.locator('#response-headers-error').isVisible()).toBe(false);
      await page.fill('#response-status', '201');
      await page.click('#response-form button[type=submit]');
      await expect
        .poll(() => page.locator('#response-toggle').textContent(), { timeout: 3000 })
        .toBe('Answer: 201 application/json, with X-Ok, after 250 ms');
      expect(await page.locator('[aria-invalid="true"]').count()).toBe(0);
      expect((await send(url, { method: 'POST', body: 'x' })).status).toBe(201);

      // A value the form can't read: a header line without a colon, and a delay over the limit.
      await page.click('#response-toggle');
      await page.fill('#response-headers', 'just a name');
      await page.fill('#response-delay', '31000');
      await page.click('#response-form button[type=submit]');
      expect(await described('response-delay')).toEqual([
        'Delay must be a whole number of milliseconds from 0 to 30000.',
      ]);
      expect(await described('response-headers')).toEqual([
        'Header 1: “just a name” is not a header: write one Name: value per line (the name: letters, digits and - only).',
      ]);
      await checkAxe(page);
      await context.close();
    });
  }
});
