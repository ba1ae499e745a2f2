import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { haveChromium, launchChromium } from './browser.js';
import { confirm, openPage, receiverUrl, rows, switchableNetwork, waitLive } from './page-helpers.js';

async function streamText(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}

/** Starts recording long tasks (> 50 ms) in the page; the returned function reads their durations so far. */
async function watchLongTasks(page: Page): Promise<() => Promise<number[]>> {
  await page.evaluate(() => {
    const seen: number[] = [];
    const observer = new PerformanceObserver((list) => seen.push(...list.getEntries().map((entry) => entry.duration)));
    observer.observe({ type: 'longtask' });
    Object.assign(window, { longTasks: () => [...seen, ...observer.takeRecords().map((entry) => entry.duration)] });
  });
  return () => page.evaluate(() => (window as unknown as { longTasks: () => number[] }).longTasks());
}

/** Waits two frames and a task: whatever the last message set off has run and painted. */
const settle = (page: Page) =>
  page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 0)))),
  );

describe.skipIf(!haveChromium)('the page under load, on the keyboard and across reconnects', () => {
  let server: TestServer;
  /** Keeps 5 requests per endpoint, so a dozen overflow it. */
  let small: TestServer;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    server = await startServer({ graceMs: 2000, logLevel: 'warn' });
    small = await startServer({ graceMs: 2000, logLevel: 'warn', requestsPerEndpoint: 5 });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([server?.close(), small?.close()]);
  });

  it('stays responsive when a hostile 501 KB JSON body arrives (no task over 200 ms)', async () => {
    const { page, url } = await openPage(context, server.baseUrl);
    const longTasks = await watchLongTasks(page);

    const body = JSON.stringify(Array.from({ length: 500 }, () => new Array<number>(500).fill(0)));
    expect(body.length).toBe(501_001);
    await send(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const detail = page.locator('#detail');
    await expect.poll(() => detail.textContent(), { timeout: 3000 }).toContain('Body (JSON, 489 KB)');
    await settle(page);
    expect(Math.max(0, ...(await longTasks()))).toBeLessThan(200);

    // The tree shows the top level a step at a time; nothing below it is built until opened.
    expect(await detail.locator('.json-tree details').count()).toBe(201);
    expect(await detail.locator('.json-tree .more').textContent()).toBe('Show 200 more (300 not shown)');
    await detail.locator('.json-tree details details').first().locator('summary').click();
    // The opened node builds its children on the toggle event, which may land after click() returns.
    await expect
      .poll(() => detail.locator('.json-tree details details').first().locator('.json-number').count(), {
        timeout: 2000,
      })
      .toBe(200);

    // The raw body is cut until asked for.
    await detail.getByRole('tab', { name: 'Raw' }).click();
    await settle(page);
    expect(Math.max(0, ...(await longTasks()))).toBeLessThan(200);
    expect((await detail.locator('pre.raw').textContent())?.length).toBeLessThan(20_000);
    await detail.getByRole('button', { name: 'Show all 489 KB' }).click();
    expect((await detail.locator('pre.raw').textContent())?.length).toBe(501_001);
    await page.close();
  });

  it('stays responsive with 7,000 form fields, or a 500 KB string on one line, and says when a form is too large to parse', async () => {
    const { page, url } = await openPage(context, server.baseUrl);
    const longTasks = await watchLongTasks(page);
    // The server parses forms up to 64 KiB (record-bounds.ts): about 7,000 short fields.
    const form = Array.from({ length: 7_000 }, (_, i) => `f${i}=${i % 10}`).join('&');
    await send(`${url}/form`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    const detail = page.locator('#detail');
    await expect.poll(() => detail.textContent(), { timeout: 3000 }).toContain('Form fields');
    await settle(page);
    expect(Math.max(0, ...(await longTasks()))).toBeLessThan(200);
    expect(await detail.locator('table.pairs').last().locator('tr').count()).toBe(200);
    await detail.getByRole('button', { name: 'Show 200 more (6800 not shown)' }).click();
    expect(await detail.locator('table.pairs').last().locator('tr').count()).toBe(400);

    const huge = Array.from({ length: 100_000 }, (_, i) => `f${i}=${i % 10}`).join('&');
    await send(`${url}/huge-form`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: huge,
    });
    await expect
      .poll(() => detail.textContent(), { timeout: 3000 })
      .toContain('Not parsed, to keep the record small: form');
    await settle(page);
    expect(Math.max(0, ...(await longTasks()))).toBeLessThan(200);

    await send(`${url}/string`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ blob: 'x'.repeat(500_000) }),
    });
    await expect.poll(() => detail.textContent(), { timeout: 3000 }).toContain('Show all 500000 characters');
    await settle(page);
    expect(Math.max(0, ...(await longTasks()))).toBeLessThan(200);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    await page.close();
  });

  it('counts dropped requests, and keeps the open request on screen when the cap pushes it out', async () => {
    const { page, url } = await openPage(context, small.baseUrl);
    await send(`${url}/1`, { method: 'POST', body: 'first' });
    await send(`${url}/2`, { method: 'POST', body: 'second' });
    await expect.poll(() => rows(page).count(), { timeout: 2000 }).toBe(2);
    await rows(page).nth(1).click();
    expect(await page.locator('#detail article').getAttribute('aria-label')).toBe('POST request #1');

    for (let i = 3; i <= 12; i++) await send(`${url}/${i}`, { method: 'POST', body: `request ${i}` });
    await expect.poll(() => page.textContent('#count'), { timeout: 2000 }).toBe('12 received, 7 dropped');
    expect(await rows(page).count()).toBe(5);
    // Still reading #1, now marked; the cue offers the ten that came since.
    expect(await page.locator('#detail article').getAttribute('aria-label')).toBe('POST request #1');
    expect(await page.locator('#detail .gone').isVisible()).toBe(true);
    expect(await page.textContent('#detail .gone')).toContain('No longer stored on the server');
    expect(await page.textContent('#jump-latest')).toBe('10 new — jump to latest');

    // A teammate joining now sees the same counts, and no "dropped while away" (they were never here).
    const teammate = await openPage(context, page.url());
    await expect.poll(() => teammate.page.textContent('#count'), { timeout: 2000 }).toBe('12 received, 7 dropped');
    expect(await teammate.page.textContent('#toast')).not.toContain('dropped');
    await teammate.page.close();

    // Jumping to the latest lets the pushed-out request go.
    await page.click('#jump-latest');
    expect(await page.locator('#detail article').getAttribute('aria-label')).toBe('POST request #12');
    expect(await page.locator('#detail .gone').isVisible()).toBe(false);
    expect(await page.locator('#jump-latest').isHidden()).toBe(true);
    await page.close();
  });

  it('reconnects with a countdown and Retry now, then tells how many requests were lost while away', async () => {
    const page = await context.newPage();
    const network = await switchableNetwork(page);
    await page.goto(small.baseUrl);
    await waitLive(page);
    const url = await receiverUrl(page);
    await send(`${url}/1`, { method: 'POST', body: 'one' });
    await send(`${url}/2`, { method: 'POST', body: 'two' });
    await expect.poll(() => rows(page).count(), { timeout: 2000 }).toBe(2);

    // The network goes: every attempt fails, and the wait grows.
    await network.down();
    await expect.poll(() => page.textContent('#state'), { timeout: 2000 }).toBe('Reconnecting…');
    for (let i = 3; i <= 12; i++) await send(`${url}/${i}`, { method: 'POST', body: `request ${i}` });
    await expect.poll(() => page.textContent('#retry-in'), { timeout: 5000 }).toMatch(/^next try in [2-9] s$/);
    expect(await page.locator('#retry-now').isVisible()).toBe(true);

    // Back up: Retry now reconnects at once, well before the countdown ends.
    network.up();
    await page.click('#retry-now');
    await expect.poll(() => page.textContent('#state'), { timeout: 900 }).toBe('Connected');
    expect(await page.locator('#retry-now').isHidden()).toBe(true);
    // It held #1-#2; #8-#12 are still stored; #3-#7 were dropped while it was away.
    await expect
      .poll(() => page.textContent('#toast'), { timeout: 2000 })
      .toContain('5 requests were dropped while away');
    expect(await page.textContent('#count')).toBe('12 received, 7 dropped');
    expect(await rows(page).count()).toBe(5);
    await page.close();
  });

  it('puts the list at one Tab stop with arrow keys inside, and a skip link first', async () => {
    const { page, url } = await openPage(context, server.baseUrl);
    for (const path of ['a', 'b', 'c']) await send(`${url}/${path}`, { method: 'POST', body: path });
    await expect.poll(() => rows(page).count(), { timeout: 2000 }).toBe(3);
    // Screen readers hear a burst once, not three times.
    await expect.poll(() => page.textContent('#announcer'), { timeout: 3000 }).toBe('3 new requests');

    // Tab through the whole page once: the list takes one stop, however many rows it has.
    await page.locator('body').focus();
    const stops: string[] = [];
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press('Tab');
      const stop = await page.evaluate(() => {
        const active = document.activeElement as HTMLElement | null;
        return !active || active === document.body
          ? 'body'
          : active.closest('#log')
            ? 'log'
            : active.id || active.textContent?.trim() || active.tagName;
      });
      if (stop === stops[0] || stop === 'body') break;
      stops.push(stop);
    }
    expect(stops[0]).toBe('skip-link');
    expect(stops.filter((stop) => stop === 'log')).toHaveLength(1);
    expect(stops.indexOf('log')).toBe(stops.indexOf('types') + 1);

    // In the list, arrows move the selection (newest first, so down is older).
    await page.locator('#log').focus();
    const selected = () => page.locator('#log [aria-selected="true"]').textContent();
    expect(await selected()).toContain('/c');
    await page.keyboard.press('ArrowDown');
    expect(await selected()).toContain('/b');
    expect(await page.getAttribute('#log', 'aria-activedescendant')).toBe('request-2');
    expect(await page.locator('#detail article').getAttribute('aria-label')).toBe('POST request #2');
    await page.keyboard.press('End');
    expect(await selected()).toContain('/a');
    await page.keyboard.press('Home');
    expect(await selected()).toContain('/c');
    // Enter goes to the detail.
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('detail');

    // The skip link goes past the list, to the detail.
    await page.focus('#skip-link');
    expect(await page.locator('#skip-link').isVisible()).toBe(true);
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('detail');
    await page.close();
  });

  it('on a phone, opens a request full screen; Back (the button or the browser) returns to the list', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
    const { page, url } = await openPage(phone, server.baseUrl);
    await send(`${url}/one`, { method: 'POST', body: 'one' });
    await send(`${url}/two`, { method: 'POST', body: 'two' });
    await expect.poll(() => rows(page).count(), { timeout: 2000 }).toBe(2);
    const log = page.locator('#log');
    const detail = page.locator('#detail');

    await rows(page).nth(1).tap();
    await detail.waitFor({ state: 'visible', timeout: 2000 });
    expect(await log.isVisible()).toBe(false);
    expect(await detail.locator('article').getAttribute('aria-label')).toBe('POST request #1');
    await page.goBack();
    await log.waitFor({ state: 'visible', timeout: 2000 });
    expect(await detail.isVisible()).toBe(false);
    expect(await receiverUrl(page)).toBe(url);

    // Another request opens at its top, not where the last one was scrolled to.
    await send(`${url}/long`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'line\n'.repeat(400),
    });
    await expect.poll(() => rows(page).count(), { timeout: 2000 }).toBe(3);
    await rows(page).first().tap();
    await page.evaluate(() => scrollTo(0, document.documentElement.scrollHeight));
    await page.click('#back-to-list');
    await log.waitFor({ state: 'visible', timeout: 2000 });
    await rows(page).nth(1).tap();
    await expect
      .poll(() => detail.evaluate((element) => Math.round(element.getBoundingClientRect().top) || 0), { timeout: 2000 })
      .toBe(0);
    await phone.close();
  });

  it('pretty-prints XML, folds a long query, copies one header value, and exports the answer status in HAR', async () => {
    const { page, url } = await openPage(context, server.baseUrl);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    const query = Array.from({ length: 12 }, (_, i) => `param${i}=value-${i}`).join('&');
    const xml = '<?xml version="1.0"?><note id="1"><to>Tove</to><body>Hi &amp; bye</body><empty/></note>';
    await send(`${url}/notes?${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml', 'x-token': 'tok-123' },
      body: xml,
    });
    await rows(page).first().waitFor({ timeout: 2000 });
    const detail = page.locator('#detail');

    expect(await detail.getByRole('tab', { name: 'Pretty' }).getAttribute('aria-selected')).toBe('true');
    expect(await detail.locator('[role="tabpanel"]:not([hidden]) pre').textContent()).toBe(
      '<?xml version="1.0"?>\n<note id="1">\n  <to>Tove</to>\n  <body>Hi &amp; bye</body>\n  <empty/>\n</note>',
    );
    await detail.getByRole('tab', { name: 'Pretty' }).press('ArrowRight');
    expect(await detail.getByRole('tab', { name: 'Raw' }).getAttribute('aria-selected')).toBe('true');
    expect(await detail.locator('[role="tabpanel"]:not([hidden]) pre').textContent()).toBe(xml);
    expect(await detail.locator('[role="tabpanel"] pre').count()).toBe(2);
    expect(await detail.locator('[role="tabpanel"]:visible').count()).toBe(1);

    const fullUrl = `${url}/notes?${query}`;
    expect(await detail.locator('.detail-url').textContent()).not.toBe(fullUrl);
    await detail.getByRole('button', { name: /Show the full query/ }).click();
    expect(await detail.locator('.detail-url').textContent()).toBe(fullUrl);

    await detail.getByRole('button', { name: 'Copy x-token value' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('tok-123');

    await page.selectOption('#export-format', 'har');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export')]);
    const har = JSON.parse(await streamText(await download.createReadStream())) as {
      log: { entries: Array<{ response: { status: number } }> };
    };
    // The server does not record the answer yet: 0 until it does.
    expect(har.log.entries.map((entry) => entry.response.status)).toEqual([200]);
    await page.close();
  });

  it('New URL confirms, and Back returns to the old endpoint', async () => {
    const { page, url: oldUrl } = await openPage(context, server.baseUrl);
    await page.click('#new-url');
    expect(await page.textContent('#confirm')).toContain('Make a new URL?');
    await page.click('#confirm-cancel');
    expect(await receiverUrl(page)).toBe(oldUrl);

    await page.click('#new-url');
    await confirm(page);
    await waitLive(page, oldUrl);
    const newUrl = await receiverUrl(page);
    await page.goBack();
    await waitLive(page, newUrl);
    expect(await receiverUrl(page)).toBe(oldUrl);
    await page.goForward();
    await waitLive(page, oldUrl);
    expect(await receiverUrl(page)).toBe(newUrl);
    await page.close();
  });
});
