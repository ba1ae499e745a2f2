import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { haveChromium, launchChromium } from './browser.js';
import { receiverUrl, rows, waitLive } from './page-helpers.js';

/**
 * The page's console stays clean while it shows bodies that look like XML but are not. Chromium
 * reports a parse error in a document with an element styled inline, which the page's CSP
 * (`style-src 'self'`) refuses with a console message: the page must never build one.
 */
describe.skipIf(!haveChromium)('the console while showing bodies', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    server = await startServer({ graceMs: 500, logLevel: 'warn' });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** Every console message (any level) and uncaught error, listened to before the page loads. */
  async function openListening(): Promise<{ page: Page; url: string; messages: string[] }> {
    const page = await context.newPage();
    const messages: string[] = [];
    page.on('console', (message) => messages.push(`${message.type()}: ${message.text()}`));
    page.on('pageerror', (error) => messages.push(`pageerror: ${error.message}`));
    await page.goto(server.baseUrl);
    await waitLive(page);
    return { page, url: await receiverUrl(page), messages };
  }

  /** Sends one request, opens it, and returns the body section's title and the raw body shown. */
  async function showBody(page: Page, url: string, contentType: string, body: string, count: number): Promise<string> {
    await send(url, { method: 'POST', headers: { 'content-type': contentType }, body });
    await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(count);
    await rows(page).first().click();
    const title = page.locator('#detail .detail-section h3', { hasText: /^Body/ });
    await title.waitFor({ timeout: 5000 });
    // A round trip after the render, so a console message it caused has arrived.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50)));
    return (await title.textContent()) ?? '';
  }

  it('logs no CSP violation for a body that starts with < but is not XML, whatever its content type', async () => {
    const { page, url, messages } = await openListening();
    const cases: Array<[string, string]> = [
      ['text/plain', '<not xml'],
      ['application/xml', '<not xml'],
      ['application/atom+xml', '<feed><entry></feed>'],
      ['text/xml', '<?xml version="1.0"?><a>&nbsp;</a>'],
      ['application/xml', '<p:a>undeclared prefix</p:a>'],
      ['application/xml', '<a x="1" x="2"/>'],
      ['application/xml', '<a>\u0001</a>'],
      ['application/xml', '<a/><b/>'],
    ];
    for (const [index, [contentType, body]] of cases.entries()) {
      const title = await showBody(page, url, contentType, body, index + 1);
      expect(title, `${contentType} ${body}`).not.toContain('XML');
      expect(await page.locator('#detail pre.raw:visible').textContent()).toBe(body);
    }
    expect(messages).toEqual([]);
    await page.close();
  });

  it('still pretty-prints well-formed XML, namespaces and all, with a clean console', async () => {
    const { page, url, messages } = await openListening();
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?><!-- feed --><feed xmlns="http://www.w3.org/2005/Atom" xmlns:h="urn:x"><h:id h:n="1">a &lt; b &#233;</h:id><![CDATA[<raw>]]><?pi data?></feed>';
    expect(await showBody(page, url, 'application/atom+xml', xml, 1)).toContain('XML');
    expect(await page.locator('#detail [role="tabpanel"]:not([hidden]) pre').textContent()).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<!-- feed -->',
        '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:h="urn:x">',
        '  <h:id h:n="1">a &lt; b é</h:id>',
        '  <![CDATA[<raw>]]>',
        '  <?pi data?>',
        '</feed>',
      ].join('\n'),
    );
    // Markup the sender styled inline is only ever text here: no element of it is built.
    const xhtml =
      '<html xmlns="http://www.w3.org/1999/xhtml" style="color: red"><svg xmlns="http://www.w3.org/2000/svg" style="fill: red"/></html>';
    expect(await showBody(page, url, 'application/xhtml+xml', xhtml, 2)).toContain('XML');
    expect(await page.locator('#detail [role="tabpanel"]:not([hidden]) pre').textContent()).toBe(
      '<html xmlns="http://www.w3.org/1999/xhtml" style="color: red">\n  <svg xmlns="http://www.w3.org/2000/svg" style="fill: red"/>\n</html>',
    );
    expect(messages).toEqual([]);
    await page.close();
  });
});
