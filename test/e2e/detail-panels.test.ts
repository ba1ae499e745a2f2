import { createHmac } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ForwardedMessage } from '../../src/shared/protocol.js';
import { send } from '../helpers/http.js';
import { SocketClient } from '../helpers/socket-client.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { haveChromium, launchChromium } from './browser.js';
import { openPage, receiverUrl, rows, waitLive } from './page-helpers.js';

const githubSignature = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe.skipIf(!haveChromium)('the detail: verifying signatures and forwarded results', () => {
  let server: TestServer;
  /** Stores at most 1 KiB of a body, so a bigger one is truncated. */
  let small: TestServer;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    server = await startServer({ graceMs: 500, logLevel: 'warn' });
    small = await startServer({ graceMs: 500, logLevel: 'warn', maxBodyBytes: 1024 });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([server?.close(), small?.close()]);
  });

  /**
   * Opens the page with every request it makes and every WebSocket frame it sends recorded,
   * from before the first byte: the listeners are on before navigation.
   */
  async function openRecorded(): Promise<{ page: Page; url: string; outgoing: string[]; errors: string[] }> {
    const page = await context.newPage();
    const outgoing: string[] = [];
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    page.on('request', (request) =>
      outgoing.push(
        `${request.method()} ${request.url()}\n${JSON.stringify(request.headers())}\n${request.postData() ?? ''}`,
      ),
    );
    page.on('websocket', (socket) => {
      outgoing.push(`websocket ${socket.url()}`);
      socket.on('framesent', (frame) =>
        outgoing.push(typeof frame.payload === 'string' ? frame.payload : frame.payload.toString('latin1')),
      );
    });
    await page.goto(server.baseUrl);
    await waitLive(page);
    return { page, url: await receiverUrl(page), outgoing, errors };
  }

  it('checks a GitHub signature in the page: Valid for the signed request, the mismatch for a tampered one, and the secret never leaves the page', async () => {
    const { page, url, outgoing, errors } = await openRecorded();
    const secret = 'e2e-Secret-7f3a9c';
    const body = '{"action":"opened","number":42}';
    const tampered = '{"action":"opened","number":43}';
    const signature = githubSignature(secret, body);
    const headers = {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-hub-signature-256': signature,
    };
    await send(`${url}/github`, { method: 'POST', headers, body });
    await send(`${url}/github`, { method: 'POST', headers, body: tampered });
    await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(2);

    // The signed one (the older row).
    await rows(page).nth(1).click();
    const panel = page.locator('#detail section.verify');
    expect(await panel.getByLabel('Sender').inputValue()).toBe('github');
    expect(await panel.textContent()).toContain('Sender guessed from the headers: GitHub');
    const secretInput = panel.getByLabel('Secret', { exact: true });
    expect(await secretInput.getAttribute('type')).toBe('password');
    await secretInput.fill(secret);
    await panel.getByLabel('Remember for this tab').check();
    await panel.getByRole('button', { name: 'Verify', exact: true }).click();
    const verdict = panel.locator('.verdict');
    await expect.poll(() => verdict.textContent(), { timeout: 5000 }).toContain('Valid (GitHub)');
    expect(await verdict.textContent()).toContain('matches: GitHub signed exactly these stored bytes');

    // The tampered one: the remembered secret is filled in; the verdict says why and shows both signatures.
    await rows(page).nth(0).click();
    expect(await panel.getByLabel('Secret', { exact: true }).inputValue()).toBe(secret);
    await panel.getByRole('button', { name: 'Verify', exact: true }).click();
    await expect.poll(() => verdict.textContent(), { timeout: 5000 }).toContain('Mismatch (GitHub)');
    expect(await verdict.textContent()).toContain(
      'The signature in x-hub-signature-256 does not match the one computed from the stored body with this secret.',
    );
    // The expected signature is good for replaying this body to the reader's app: only its start shows until asked.
    const expected = githubSignature(secret, tampered);
    const compared = () =>
      verdict
        .locator('tr')
        .evaluateAll((trs) =>
          trs.map((tr) => `${tr.querySelector('th')?.textContent}: ${tr.querySelector('td .signature')?.textContent}`),
        );
    expect(await verdict.textContent()).not.toContain(expected);
    expect(await compared()).toEqual([`Expected: ${expected.slice(0, 12)}…`, `Received: ${signature}`]);
    const showFull = verdict.getByRole('button', { name: 'Show full' });
    expect(await showFull.getAttribute('aria-expanded')).toBe('false');
    await showFull.focus();
    await page.keyboard.press('Enter');
    expect(await compared()).toEqual([`Expected: ${expected}`, `Received: ${signature}`]);
    const showLess = verdict.getByRole('button', { name: 'Show less' });
    expect(await showLess.getAttribute('aria-expanded')).toBe('true');
    expect(await showLess.evaluate((button) => button === document.activeElement)).toBe(true);
    await showLess.click();
    expect(await compared()).toEqual([`Expected: ${expected.slice(0, 12)}…`, `Received: ${signature}`]);
    expect(await verdict.getByRole('button', { name: 'Show full' }).getAttribute('aria-expanded')).toBe('false');
    expect(await verdict.textContent()).not.toContain(secret);

    // Unticking "remember" forgets it at once.
    expect(await page.evaluate(() => sessionStorage.getItem('hookwatch.secret.github'))).toBe(secret);
    await panel.getByLabel('Remember for this tab').uncheck();
    expect(await page.evaluate(() => sessionStorage.getItem('hookwatch.secret.github'))).toBeNull();

    // Nothing the page sent (HTTP requests, their headers and bodies, WebSocket frames) holds the secret.
    expect(outgoing.some((text) => text.startsWith('{"type":"join"') || text.startsWith('{"type":"create"'))).toBe(
      true,
    );
    expect(outgoing.filter((text) => text.includes(secret))).toEqual([]);
    expect(page.url()).not.toContain(secret);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('says a truncated body cannot be checked, and lets the reader pick the sender when none is recognised', async () => {
    const opened = await openPage(context, small.baseUrl);
    await send(opened.url, {
      method: 'POST',
      headers: { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` },
      body: 'x'.repeat(3000),
    });
    const panel = opened.page.locator('#detail section.verify');
    await expect
      .poll(() => panel.textContent(), { timeout: 5000 })
      .toContain('stored truncated, and a signature covers the whole body, so no check is possible');
    expect(await panel.locator('input, select, button').count()).toBe(0);

    await send(opened.url, { method: 'POST', body: 'unsigned' });
    // No signature header: the panel is a small action until asked for.
    await expect.poll(() => panel.locator('form').count(), { timeout: 5000 }).toBe(0);
    await panel.getByRole('button', { name: 'Verify signature…' }).click();
    expect(await panel.textContent()).toContain('No known signature header found: choose the sender.');
    await panel.getByRole('button', { name: 'Verify', exact: true }).click();
    expect(await panel.locator('.verdict').textContent()).toBe(
      'Choose the sender first: no known signature header was found.',
    );
    await panel.getByLabel('Sender').selectOption('shopify');
    await panel.getByLabel('Secret', { exact: true }).fill('shpat_123');
    await panel.getByRole('button', { name: 'Verify', exact: true }).click();
    await expect
      .poll(() => panel.locator('.verdict').textContent(), { timeout: 5000 })
      .toContain('Missing header (Shopify)');
    await opened.page.close();
  });

  it('shows what forwarders got on the row and in the detail, including a result that came before its request', async () => {
    const { page, url } = await openPage(context, server.baseUrl);
    const [, endpointId = '', key = ''] = /#([^.]+)\.(.+)$/.exec(page.url()) ?? [];
    const forwarder = await SocketClient.join(server.wsUrl, endpointId, key);
    const report = (extra: Partial<ForwardedMessage>): ForwardedMessage => ({
      type: 'forwarded',
      seq: 1,
      target: 'http://localhost:3000/hook/orders',
      status: 200,
      durationMs: 12.4,
      headers: [
        ['Content-Type', 'application/json'],
        ['X-Evil', '<img src=x onerror="window.__pwned = 1">'],
      ],
      body: '{"received":true,"note":"<script>window.__pwned = 2</script>"}',
      bodyEncoding: 'utf8',
      bodyTruncated: false,
      ...extra,
    });
    // Before the request exists: the page keeps it for when it arrives.
    forwarder.client.send(report({}));
    await forwarder.client.next('forwarded');
    await send(`${url}/orders`, { method: 'POST', body: 'order' });
    await rows(page).first().waitFor({ timeout: 5000 });
    const badge = rows(page).first().locator('.fwd-badge');
    await expect.poll(() => badge.textContent(), { timeout: 5000 }).toBe('forwarded → 200');

    const section = page.locator('#detail .fwd-section');
    await expect
      .poll(() => section.locator('.fwd-line').allTextContents(), { timeout: 5000 })
      .toEqual(['forwarded to http://localhost:3000/hook/orders → 200 in 12 ms']);
    await section.locator('summary').first().click();
    expect(await section.locator('pre.raw').textContent()).toBe(
      '{"received":true,"note":"<script>window.__pwned = 2</script>"}',
    );
    expect(await section.locator('tr').allTextContents()).toContain('X-Evil<img src=x onerror="window.__pwned = 1">');

    // A second forwarder's failure, while the detail is open: listed too, the first answer still open.
    forwarder.client.send(
      report({
        target: 'http://localhost:4000/',
        status: undefined,
        error: 'connect ECONNREFUSED 127.0.0.1:4000',
        durationMs: 3,
        headers: [],
        body: '',
      }),
    );
    await expect.poll(() => section.locator('.fwd-line').count(), { timeout: 5000 }).toBe(2);
    expect(await section.locator('.fwd-line').nth(1).textContent()).toBe(
      'forwarded to http://localhost:4000/ → failed after 3 ms: connect ECONNREFUSED 127.0.0.1:4000',
    );
    expect(await section.locator('details').first().getAttribute('open')).toBe('');
    expect(await section.locator('h3').textContent()).toBe('Forwarded (2)');
    expect(await badge.textContent()).toBe('forwarded 2 times, newest → failed');
    expect(await badge.getAttribute('title')).toBe(
      'forwarded to http://localhost:3000/hook/orders → 200 in 12 ms\nforwarded to http://localhost:4000/ → failed after 3 ms: connect ECONNREFUSED 127.0.0.1:4000',
    );

    expect(await page.locator('#detail img, #detail script').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await forwarder.client.close();
    await page.close();
  });
});
