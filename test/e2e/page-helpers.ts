import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Where screenshots go: a temp dir, so tests never modify tracked files. With
 * UPDATE_SCREENSHOTS=1 they replace the ones in docs/ that the README shows.
 */
export const screenshotDir = process.env.UPDATE_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/', import.meta.url)) : tmpdir();

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
      return url.startsWith('http') && url !== old && document.getElementById('state')?.textContent === 'Live';
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
    .evaluateAll((trs) => trs.map((tr) => `${tr.querySelector('th')?.textContent ?? ''}${tr.querySelector('td')?.textContent ?? ''}`));
}

/**
 * Confirms the page's own confirmation dialog. Brings the tab to the front first: headless
 * Chromium paints a background tab about once a second, too slowly for a click's stability check.
 */
export async function confirm(page: Page): Promise<void> {
  await page.bringToFront();
  await page.locator('#confirm-ok').click({ timeout: 5000 });
}
