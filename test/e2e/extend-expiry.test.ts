// Extend never shortens, and a kept endpoint warns in its last hour (issue 34, items 2 and 17).
// At 1280×800 and 390×844, light and dark, axe clean.
import { describe, expect, it } from 'vitest';
import type { EndpointInfo } from '../../src/shared/protocol.js';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import { checkAxe, openPage, serverAndBrowser, VIEWS, viewContext } from './page-helpers.js';

const DAY = 24 * 3600_000;

describe.skipIf(!haveChromium)('Extend and the expiry warning (issue 34)', () => {
  const rig = serverAndBrowser();

  async function createKept(body: Record<string, unknown>): Promise<EndpointInfo> {
    const created = await send(`${rig.server.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'kept', ...body }),
    });
    expect(created.status).toBe(201);
    return JSON.parse(created.text) as EndpointInfo;
  }

  for (const view of VIEWS) {
    it(`${view.name}: a teammate opening a 7-day endpoint's link is offered 7 days, not the 2 h it would shorten to`, async () => {
      const kept = await createKept({ ttlMs: 7 * DAY });
      const context = await viewContext(rig.browser, view);
      const { page } = await openPage(context, `${rig.server.baseUrl}/#${kept.id}.${kept.key}`);
      const extend = page.locator('#extend');
      await expect.poll(() => extend.textContent(), { timeout: 2000 }).toBe('Extend to 7 days');
      // Lifetime set to 2 h: still not shorter than what is left.
      await page.getByRole('radio', { name: /^Kept for/ }).check();
      await page.getByLabel('Lifetime').selectOption({ label: '2 h' });
      expect(await extend.textContent()).toBe('Extend to 7 days');
      expect(await page.isVisible('#expiry-warning')).toBe(false);
      await checkAxe(page);
      await extend.click();
      await expect
        .poll(() => page.textContent('#toast'), { timeout: 3000 })
        .toMatch(/^Extended: expires in (7 days|6 d 23 h)$/);
      const stored = Date.parse((await rig.server.store.getEndpoint(kept.id))?.expiresAt ?? '');
      expect(stored - Date.now()).toBeGreaterThan(7 * DAY - 60_000);
      await context.close();
    });

    it(`${view.name}: in its last hour a kept endpoint says so, with Extend beside it`, async () => {
      const kept = await createKept({ ttlMs: 30 * 60_000 });
      const context = await viewContext(rig.browser, view);
      const { page } = await openPage(context, `${rig.server.baseUrl}/#${kept.id}.${kept.key}`);
      const warning = page.locator('#expiry-warning');
      await warning.waitFor({ state: 'visible', timeout: 2000 });
      expect(await warning.textContent()).toMatch(/^Expires in 29 min: extend it, or its URL answers 404 from .+\.$/);
      expect(await page.textContent('#toast')).toMatch(/^Expires in 29 min/);
      expect(await page.textContent('#extend')).toBe('Extend to 2 h');
      await checkAxe(page);
      await page.click('#extend');
      await warning.waitFor({ state: 'hidden', timeout: 3000 });
      await context.close();
    });
  }
});
