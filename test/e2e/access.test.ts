// A private instance (issue 37): in token mode the page asks for a token once, keeps it in the
// browser and sends it with every call and in the socket's first message (never in a URL); in
// proxy mode "Your endpoints" lists the user's own from the server, in a fresh browser too.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { EndpointInfo } from '../../src/shared/protocol.js';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { haveChromium, launchChromium } from './browser.js';
import { checkAxe, openPage, receiverUrl, rows, VIEWS, viewContext, waitLive } from './page-helpers.js';

const TOKEN = 'page-token-0123456789abcdef';

describe.skipIf(!haveChromium)('a private instance in the page (issue 37)', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());

  describe('ACCESS_MODE=token', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startServer({
        accessMode: 'token',
        accessTokens: loadConfig({ ACCESS_TOKENS: `ada:${TOKEN}` }, []).access.accessTokens,
        logLevel: 'warn',
      });
    });
    afterAll(() => server?.close());

    for (const view of VIEWS.filter((candidate) => candidate.colorScheme === 'light' || candidate.width < 500)) {
      it(`${view.name}: asks for a token once, refuses a wrong one, and keeps the right one`, async () => {
        const context = await viewContext(browser, view);
        const page = await context.newPage();
        const errors: string[] = [];
        page.on('pageerror', (error) => errors.push(error.message));
        const sockets: Array<{ url: string; sent: string[] }> = [];
        page.on('websocket', (socket) => {
          const seen = { url: socket.url(), sent: [] as string[] };
          sockets.push(seen);
          socket.on('framesent', (frame) => seen.sent.push(String(frame.payload)));
        });
        await page.goto(server.baseUrl);
        const dialog = page.getByRole('dialog', { name: 'Sign in to this Hookwatch' });
        await dialog.waitFor({ timeout: 5000 });
        // Nothing is made before signing in.
        expect(sockets).toEqual([]);
        await checkAxe(page);
        const box = await dialog.boundingBox();
        expect(box && box.x >= 0 && box.x + box.width <= view.width).toBe(true);

        await page.getByLabel('Access token').fill(`${TOKEN}x`);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await expect.poll(() => page.textContent('#sign-in-error')).toBe('This server does not accept that token.');
        expect(await page.getAttribute('#sign-in-token', 'aria-invalid')).toBe('true');
        await checkAxe(page);
        await page.keyboard.press('Escape');
        expect(await dialog.isVisible()).toBe(true);

        await page.getByLabel('Access token').fill(TOKEN);
        await page.keyboard.press('Enter');
        await waitLive(page);
        expect(await page.locator('#sign-in').count()).toBe(0);
        const url = await receiverUrl(page);
        await send(`${url}/hello`, { method: 'POST', body: 'x' });
        await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(1);
        expect(sockets[0]?.url).not.toContain(TOKEN);
        expect(JSON.parse(sockets[0]?.sent[0] ?? '{}')).toMatchObject({ type: 'create', token: TOKEN });
        await checkAxe(page);

        // Kept in this browser: a reload signs in without asking.
        await page.reload();
        await waitLive(page);
        expect(await page.locator('#sign-in').count()).toBe(0);
        expect(errors).toEqual([]);
        await context.close();
      });
    }
  });

  describe('a token withdrawn while the page watches', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookwatch-page-tokens-'));
    const file = join(dir, 'tokens');
    let server: TestServer;
    beforeAll(async () => {
      writeFileSync(file, `ada:${TOKEN}\nbob:${TOKEN}-bob\n`);
      server = await startServer({ accessMode: 'token', accessTokensFile: file, heartbeatMs: 1000, logLevel: 'warn' });
    });
    afterAll(async () => {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('closes its socket within a heartbeat, and the page asks for a token again', async () => {
      const context = await viewContext(browser, VIEWS[0] as (typeof VIEWS)[number]);
      // Signed in before, once: the page starts with the token kept in this browser.
      await context.addInitScript((token) => {
        if (sessionStorage.getItem('seeded') !== null) return;
        sessionStorage.setItem('seeded', '1');
        localStorage.setItem('hookwatch.accessToken', token);
      }, TOKEN);
      const { page } = await openPage(context, server.baseUrl);
      expect(await page.locator('#sign-in').count()).toBe(0);
      writeFileSync(file, `bob:${TOKEN}-bob\n`);
      expect(server.app.reloadAccess()).toBe(1);
      await page.getByRole('dialog', { name: 'Sign in to this Hookwatch' }).waitFor({ timeout: 5000 });
      expect(await page.evaluate(() => localStorage.getItem('hookwatch.accessToken'))).toBeNull();
      await context.close();
    });
  });

  describe('ACCESS_MODE=proxy', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startServer({ accessMode: 'proxy', trustProxy: ['127.0.0.1'], logLevel: 'warn' });
    });
    afterAll(() => server?.close());

    it("lists the user's own endpoints in a fresh browser, after a reload, and opens one without its key", async () => {
      const ada = { 'X-Forwarded-Email': 'ada@example.com' };
      const made = await fetch(`${server.baseUrl}/api/endpoints`, {
        method: 'POST',
        headers: { ...ada, 'content-type': 'application/json' },
        body: '{"kind":"kept","name":"ada-stripe"}',
      });
      const kept = (await made.json()) as EndpointInfo;
      await send(`${kept.url}/one`, { method: 'POST', body: 'first' });

      const view = VIEWS[0] as (typeof VIEWS)[number];
      // A browser that has never seen the endpoint: no key, nothing in localStorage.
      const context = await browser.newContext({ ...(await contextOptions(view)), extraHTTPHeaders: ada });
      const { page } = await openPage(context, server.baseUrl);
      await page.reload();
      await waitLive(page);
      await page.click('#endpoints-open');
      const item = page.locator('#endpoints-list li', { hasText: 'ada-stripe' });
      await item.waitFor({ timeout: 3000 });
      expect(await item.innerText()).toMatch(/Kept · expires in 1 h 59 min · yours on this server/);
      await checkAxe(page);
      await item.getByRole('button', { name: 'Open ada-stripe' }).click();
      await expect.poll(() => receiverUrl(page), { timeout: 3000 }).toBe(kept.url);
      await waitLive(page);
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(1);
      // A reload stays on it.
      await page.reload();
      await waitLive(page);
      expect(await receiverUrl(page)).toBe(kept.url);

      // Another user's browser lists nothing of Ada's.
      const other = await browser.newContext({
        ...(await contextOptions(view)),
        extraHTTPHeaders: { 'X-Forwarded-Email': 'bob@example.com' },
      });
      const bob = await openPage(other, server.baseUrl);
      await bob.page.click('#endpoints-open');
      await expect
        .poll(() => bob.page.locator('#endpoints-list li', { hasText: 'ada-stripe' }).count(), { timeout: 2000 })
        .toBe(0);
      await other.close();
      await context.close();
    });
  });
});

/** The options viewContext uses, for a context that also needs extra headers. */
async function contextOptions(view: (typeof VIEWS)[number]) {
  return {
    viewport: { width: view.width, height: view.height },
    colorScheme: view.colorScheme,
    bypassCSP: true,
    locale: 'en-US',
  };
}
