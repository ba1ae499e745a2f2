import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import type { Browser, BrowserContext, Page, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { launchChromium } from './browser.js';

/**
 * Where screenshots go: a temp dir, so tests never modify tracked files. With
 * UPDATE_SCREENSHOTS=1 they replace the ones in docs/ that the README shows.
 */
export const screenshotDir =
  process.env.UPDATE_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/', import.meta.url)) : tmpdir();

export interface OpenedPage {
  page: Page;
  url: string;
  /** Uncaught errors and console errors (a CSP violation is one) seen so far. */
  errors: string[];
}

/** Opens the page in `context` and waits until it is live on an endpoint. */
export async function openPage(context: BrowserContext, link: string): Promise<OpenedPage> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
  page.on('dialog', (dialog) => void dialog.dismiss());
  await page.goto(link);
  await waitLive(page);
  expect(errors).toEqual([]);
  return { page, url: await receiverUrl(page), errors };
}

export async function waitLive(page: Page, notUrl?: string): Promise<void> {
  await page.waitForFunction(
    (old) => {
      const url = document.getElementById('receiver-url')?.textContent ?? '';
      return url.startsWith('http') && url !== old && document.getElementById('state')?.dataset.state === 'live';
    },
    notUrl,
    { timeout: 5000 },
  );
}

export async function receiverUrl(page: Page): Promise<string> {
  return (await page.textContent('#receiver-url')) ?? '';
}

export const rows = (page: Page) => page.locator('#log [role="option"]');
export const clipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText());

/** Name and value cells of one pairs table in the detail (the copy buttons left out); -1: the last. */
export async function pairs(page: Page, index: number): Promise<string[]> {
  const tables = page.locator('#detail table.pairs');
  return (index < 0 ? tables.last() : tables.nth(index))
    .locator('tr')
    .evaluateAll((trs) =>
      trs.map((tr) => `${tr.querySelector('th')?.textContent ?? ''}${tr.querySelector('td')?.textContent ?? ''}`),
    );
}

/**
 * Confirms the page's own confirmation dialog. Brings the tab to the front first: headless
 * Chromium paints a background tab about once a second, too slowly for a click's stability check.
 */
export async function confirm(page: Page): Promise<void> {
  await page.bringToFront();
  await page.locator('#confirm-ok').click({ timeout: 5000 });
}

/** The sizes and themes the page is checked at: a laptop and a phone, light and dark. */
export const VIEWS = [1280, 390].flatMap((width) =>
  (['light', 'dark'] as const).map((colorScheme) => ({
    width,
    height: width < 500 ? 844 : 800,
    colorScheme,
    name: `${width} px, ${colorScheme}`,
  })),
);
export type View = (typeof VIEWS)[number];

/**
 * A context at `view`'s size and theme. bypassCSP only so that axe's script can be injected; the
 * page runs as served otherwise. A phone-sized view is a touch screen too.
 */
export function viewContext(browser: Browser, view: View): Promise<BrowserContext> {
  const phone = view.width < 500;
  return browser.newContext({
    viewport: { width: view.width, height: view.height },
    colorScheme: view.colorScheme,
    bypassCSP: true,
    hasTouch: phone,
    isMobile: phone,
    locale: 'en-US',
  });
}

interface Violation {
  id: string;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/**
 * No axe violations on the page as it is now. Waits first until the toast is fully in or out:
 * axe while it fades would judge its half-transparent colours.
 */
export async function checkAxe(page: Page): Promise<void> {
  await page.waitForFunction(
    () => {
      const toast = document.getElementById('toast');
      return toast === null || ['0', '1'].includes(getComputedStyle(toast).opacity);
    },
    undefined,
    { timeout: 5000 },
  );
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: axe.source });
  const violations = await page.evaluate(async () => {
    const result = await (window as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map(({ id, help, nodes }) => ({
      id,
      help,
      nodes: nodes.map(({ target, failureSummary }) => ({ target, failureSummary })),
    }));
  });
  expect(violations as Violation[]).toEqual([]);
}

/** Opens row `index` (0: newest). On a phone that shows the detail in place of the list: `close()` goes back. */
export async function openRow(page: Page, index: number): Promise<{ close: () => Promise<void> }> {
  await rows(page).nth(index).click();
  const narrow = await page.evaluate(() => matchMedia('(max-width: 879px)').matches);
  return {
    close: async () => {
      if (!narrow) return;
      await page.click('#back-to-list');
      await page.locator('#log').waitFor({ state: 'visible', timeout: 2000 });
    },
  };
}

/** The text of a download. */
export async function downloadText(page: Page, click: () => Promise<void>): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent('download'), click()]);
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** A server and a Chromium for a describe block: started before its tests, closed after them. */
export function serverAndBrowser(): { server: TestServer; browser: Browser } {
  const rig = {} as { server: TestServer; browser: Browser };
  beforeAll(async () => {
    rig.server = await startServer({ graceMs: 500, logLevel: 'warn' });
    rig.browser = await launchChromium();
  });
  afterAll(async () => {
    await rig.browser?.close();
    await rig.server?.close();
  });
  return rig;
}

/**
 * The page's live socket through a switch the test holds: `down()` closes every socket and
 * refuses new ones (as a dropped network would), `up()` lets them through again.
 */
export async function switchableNetwork(page: Page): Promise<{ down: () => Promise<void>; up: () => void }> {
  let open = true;
  const sockets: WebSocketRoute[] = [];
  await page.routeWebSocket(/\/api\/live$/, (ws) => {
    if (!open) return void ws.close({ code: 4999, reason: 'test: network down' });
    ws.connectToServer();
    sockets.push(ws);
  });
  return {
    down: async () => {
      open = false;
      for (const ws of sockets) await ws.close({ code: 4999, reason: 'test: network down' });
    },
    up: () => {
      open = true;
    },
  };
}
