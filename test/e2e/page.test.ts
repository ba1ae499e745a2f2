import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { SocketClient } from '../helpers/socket-client.js';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { haveChromium, launchChromium } from './browser.js';
import {
  clipboard,
  confirm,
  openPage as open,
  pairs,
  receiverUrl,
  rows,
  screenshotDir,
  waitLive,
} from './page-helpers.js';

// Async on purpose: the server runs in this process, so a blocking curl would deadlock it.
const run = promisify(execFile);
const curl = (...args: string[]) => run('curl', ['-sS', '--max-time', '5', ...args], { encoding: 'buffer' });

describe.skipIf(!haveChromium)('the page in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    server = await startServer({ graceMs: 500, logLevel: 'warn' });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  async function openPage(link = server.baseUrl): Promise<{ page: Page; url: string }> {
    const opened = await open(context, link);
    return { page: opened.page, url: opened.url };
  }

  it('shows each request sent with curl, with its details, within a second', async () => {
    const { page, url } = await openPage();
    expect(url).toMatch(new RegExp(`^${server.baseUrl}/api/webhook-tester/[A-Za-z0-9_-]{21}$`));
    expect(page.url()).toMatch(/#[A-Za-z0-9_-]{21}\.[A-Za-z0-9]{32}$/);

    await curl(
      '-X',
      'POST',
      `${url}/github/push?delivery=42&tag=a&tag=b`,
      '-H',
      'Content-Type: application/json',
      '-H',
      'X-GitHub-Event: push',
      '-H',
      'X-Dup: one',
      '-H',
      'X-Dup: two',
      '--data-raw',
      '{"ref":"refs/heads/main","commits":[{"id":"c0ffee","message":"Fix it"}]}',
    );
    await rows(page).first().waitFor({ timeout: 1000 });
    expect(await rows(page).count()).toBe(1);
    const detail = page.locator('#detail');
    await expect.poll(() => detail.textContent(), { timeout: 1000 }).toContain('/github/push?delivery=42&tag=a&tag=b');
    const headerRows = await pairs(page, 2);
    expect(headerRows.filter((row) => row.startsWith('X-Dup'))).toEqual(['X-Dupone', 'X-Duptwo']);
    expect(await detail.textContent()).toContain('"ref": "refs/heads/main"');
    expect(await pairs(page, 1)).toEqual(['delivery42', 'taga', 'tagb']);

    await curl('-X', 'PUT', `${url}/form`, '--data-raw', 'name=Ada%20Lovelace&lang=en&lang=fr');
    await expect.poll(() => rows(page).count(), { timeout: 1000 }).toBe(2);
    await rows(page).first().click();
    expect(await detail.textContent()).toContain('Form fields');
    expect(await pairs(page, -1)).toEqual(['nameAda Lovelace', 'langen', 'langfr']);

    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe, 0x10]);
    const sent = run('curl', [
      '-sS',
      '-X',
      'POST',
      `${url}/upload`,
      '-H',
      'Content-Type: application/octet-stream',
      '--data-binary',
      '@-',
    ]);
    sent.child.stdin?.end(binary);
    await sent;
    await expect.poll(() => rows(page).count(), { timeout: 1000 }).toBe(3);
    await rows(page).first().click();
    expect(await detail.textContent()).toContain('89 50 4e 47 00 ff fe 10');
    expect(await detail.textContent()).toContain('Body (binary, 8 B)');

    await curl(`${url}?search=hook&page=2`);
    await expect.poll(() => rows(page).count(), { timeout: 1000 }).toBe(4);
    expect(await rows(page).first().textContent()).toContain('GET/?search=hook&page=2');
    expect(await rows(page).first().locator('time').getAttribute('title')).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$/,
    );
    expect(await rows(page).first().textContent()).toMatch(/(now|\d+ s ago)/);

    // Filter by text and by method.
    await page.fill('#filter', 'refs/heads');
    expect(await rows(page).count()).toBe(1);
    await page.fill('#filter', '');
    await page.selectOption('#method-filter', 'PUT');
    expect(await rows(page).count()).toBe(1);
    await page.selectOption('#method-filter', '');

    // A filter that matches nothing says so, in the list and in the detail.
    await page.fill('#filter', 'no such thing');
    expect(await rows(page).count()).toBe(0);
    expect(await page.textContent('#no-match')).toContain('No request matches “no such thing”');
    expect(await detail.textContent()).toContain('No request matches “no such thing”.');
    await page.click('#clear-filter');
    expect(await rows(page).count()).toBe(4);

    // Keyboard: j moves to an older request, k back.
    await rows(page).first().click();
    await page.keyboard.press('j');
    expect(await page.locator('#log [aria-selected="true"]').textContent()).toContain('POST/upload');
    await page.keyboard.press('k');
    expect(await page.locator('#log [aria-selected="true"]').textContent()).toContain('GET/?search');

    await rows(page).nth(3).click();
    // As a reader would first see it: no focus ring or hover from the steps above.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.mouse.move(0, 0);
    await page.screenshot({ path: join(screenshotDir, 'screenshot.png') });
    // The same log on a phone: the list, the header wrapped above it.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('#back-to-list').waitFor({ state: 'hidden' });
    await page.screenshot({ path: join(screenshotDir, 'screenshot-phone.png') });
    await page.close();
  });

  it('two tabs on one share link both get each request, and share the response configuration', async () => {
    const first = await openPage();
    const second = await openPage(first.page.url());
    expect(second.url).toBe(first.url);

    await curl('-X', 'POST', first.url, '--data-raw', 'to both');
    for (const { page } of [first, second]) await expect.poll(() => rows(page).count(), { timeout: 1000 }).toBe(1);

    await first.page.click('#response-toggle');
    await first.page.fill('#response-status', '429');
    await first.page.fill('#response-delay', '2000');
    await first.page.selectOption('#response-content-type', 'text/plain');
    await first.page.fill('#response-headers', 'Retry-After: 30');
    await first.page.fill('#response-body', 'slow down');
    // An edit that is not applied reads as one, and senders still get the old answer.
    expect(await first.page.isVisible('#response-unsaved')).toBe(true);
    expect((await send(first.url, { method: 'POST', body: 'before' })).status).toBe(200);
    await first.page.click('#response-form button[type=submit]');
    await expect.poll(() => second.page.inputValue('#response-status'), { timeout: 1000 }).toBe('429');
    expect(await second.page.inputValue('#response-headers')).toBe('Retry-After: 30');
    expect(await second.page.textContent('#response-current')).toBe('Senders get 429 with Retry-After, after 2 s.');
    await expect.poll(() => first.page.isVisible('#response-unsaved'), { timeout: 1000 }).toBe(false);

    // What curl gets, timed.
    const started = Date.now();
    const { stdout } = await curl('-i', '-X', 'POST', first.url, '--data-raw', 'x');
    const took = Date.now() - started;
    const text = stdout.toString();
    expect(text).toMatch(/^HTTP\/1\.1 429/);
    expect(text).toMatch(/\r\nretry-after: 30\r\n/i);
    expect(text.endsWith('slow down')).toBe(true);
    expect(took).toBeGreaterThanOrEqual(2000);
    expect(took).toBeLessThan(4000);
    // The request records the answer its sender got, and the page shows it.
    await expect.poll(() => first.page.textContent('#detail'), { timeout: 2000 }).toContain('429 after 2000 ms');
    await first.page.close();
    await second.page.close();
  });

  it('lists the fields and files of a multipart upload, each file with its own download', async () => {
    const { page, url } = await openPage();
    await curl('-F', 'name=Ada', '-F', 'note=hello world', '-F', 'upload=@package.json;type=application/json', url);
    const detail = page.locator('#detail');
    await expect.poll(() => detail.textContent(), { timeout: 2000 }).toContain('Parts (3)');
    const parts = await detail.locator('table.parts tbody tr').allTextContents();
    expect(parts[0]).toContain('Ada');
    expect(parts[1]).toContain('hello world');
    expect(parts[2]).toContain('file package.json');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      detail.getByRole('button', { name: /Download part 3/ }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('package.json');
    await page.close();
  });

  it('copies a request as cURL that re-sends the same method, headers and body bytes', async () => {
    const { page, url } = await openPage();
    const body = Buffer.concat([
      Buffer.from('{"quote":"it\'s \\"fine\\"", "emoji":"😀"}\n'),
      Buffer.from([0x00, 0xff, 0x80, 0x27, 0x22, 0x24, 0x60]),
    ]);
    const sent = run('curl', [
      '-sS',
      '-X',
      'PATCH',
      `${url}/orders/7?x=1&x=2`,
      '-H',
      'X-Quote: it\'s "quoted" $HOME `ls`',
      '-H',
      'X-Dup: 1',
      '-H',
      'X-Dup: 2',
      '-H',
      'Content-Type: application/octet-stream',
      '--data-binary',
      '@-',
    ]);
    sent.child.stdin?.end(body);
    await sent;
    await rows(page).first().waitFor({ timeout: 1000 });
    await page.locator('#detail button', { hasText: 'Copy as cURL' }).click();
    const command = await clipboard(page);
    expect(command).toContain('base64 -d');

    // Replay it against a second endpoint, with real curl through a real shell.
    const target = await SocketClient.create(server.wsUrl);
    await run('sh', ['-c', command.replace(url, target.welcome.endpoint.url)]);
    const [replayed] = await target.client.requests(1);
    await target.client.close();

    const original = await lastCaptured(page);
    expect(replayed?.method).toBe('PATCH');
    expect(replayed?.subPath).toBe('/orders/7');
    expect(replayed?.query).toEqual({ x: ['1', '2'] });
    expect(Buffer.from(replayed?.body ?? '', 'base64').equals(body)).toBe(true);
    const comparable = (request: CapturedRequest | undefined) =>
      request?.headers.filter(([name]) => !['host', 'content-length'].includes(name.toLowerCase()));
    expect(comparable(replayed)).toEqual(comparable(original));

    // And the keyboard shortcut copies the same command.
    await page.evaluate(() => navigator.clipboard.writeText(''));
    await page.keyboard.press('c');
    await expect.poll(() => clipboard(page)).toBe(command);
    await page.close();
  });

  it('renders script and onerror payloads as text and runs none of them', async () => {
    const { page, url } = await openPage();
    const payload = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
    await curl(
      '-X',
      'POST',
      `${url}/%3Cimg%20src=x%20onerror=alert(1)%3E?q=<b>hi</b>`,
      '-H',
      `X-Evil: ${payload}`,
      '-H',
      'Content-Type: text/html',
      '--data-raw',
      payload,
    );
    await rows(page).first().waitFor({ timeout: 1000 });
    await rows(page).first().click();
    const detail = page.locator('#detail');
    expect(await detail.locator('pre.raw').textContent()).toBe(payload);
    expect(await detail.textContent()).toContain(`X-Evil${payload}`);
    expect(await page.locator('#detail img, #detail script, #log img, #log script').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.close();
  });

  it('clears the log in every tab, and New URL leaves the old endpoint to expire', async () => {
    const first = await openPage();
    const second = await openPage(first.page.url());
    await curl('-X', 'POST', first.url, '--data-raw', 'one');
    await curl('-X', 'POST', first.url, '--data-raw', 'two');
    for (const { page } of [first, second]) await expect.poll(() => rows(page).count(), { timeout: 1000 }).toBe(2);

    await second.page.click('#clear');
    await confirm(second.page);
    for (const { page } of [first, second]) await expect.poll(() => rows(page).count(), { timeout: 1000 }).toBe(0);
    expect(await first.page.textContent('#count')).toBe('0 received');

    const oldUrl = first.url;
    for (const { page } of [first, second]) {
      await page.click('#new-url');
      await confirm(page);
      await waitLive(page, oldUrl);
    }
    const [urlA, urlB] = [await receiverUrl(first.page), await receiverUrl(second.page)];
    expect(new Set([oldUrl, urlA, urlB]).size).toBe(3);

    // Nobody watches the old endpoint any more: after the grace it is gone.
    await expect.poll(async () => (await send(oldUrl)).status, { timeout: 3000, interval: 100 }).toBe(404);
    expect((await send(urlA)).status).toBe(200);
    await first.page.close();
    await second.page.close();
  });

  it('shows an expired endpoint and offers a new URL', async () => {
    const watcher = await SocketClient.create(server.wsUrl);
    const link = `${server.baseUrl}/#${watcher.welcome.endpoint.id}.${watcher.welcome.endpoint.key}`;
    await watcher.client.close();
    await expect
      .poll(async () => (await send(watcher.welcome.endpoint.url)).status, { timeout: 3000, interval: 100 })
      .toBe(404);

    const page = await context.newPage();
    await page.goto(link);
    await page.locator('#expired').waitFor({ state: 'visible', timeout: 3000 });
    expect(await page.textContent('#state')).toBe('Expired');
    expect(await page.locator('#copy-url').isDisabled()).toBe(true);
    await page.click('#expired-new-url');
    await waitLive(page);
    expect(await page.locator('#expired').isHidden()).toBe(true);
    expect(await page.locator('#copy-url').isEnabled()).toBe(true);
    await page.close();
  });
});

/** The newest request as the page holds it (via its own Copy JSON). */
async function lastCaptured(page: Page): Promise<CapturedRequest> {
  await page.locator('#detail button', { hasText: 'Copy JSON' }).click();
  return JSON.parse(await page.evaluate(() => navigator.clipboard.readText())) as CapturedRequest;
}
