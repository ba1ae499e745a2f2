// Understanding deliveries in the page (product decision 19): the diff of two requests, the
// timeline of one delivery's attempts with the retried-only filter, and types generated from the
// bodies shown; at a laptop's and a phone's width, axe clean.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { compileWithBodies, loadZodSchema } from '../helpers/generated-types.js';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import {
  checkAxe,
  openPage,
  openRow,
  rows,
  screenshotDir,
  serverAndBrowser,
  VIEWS,
  viewContext,
} from './page-helpers.js';

const views = VIEWS;

const GITHUB_PUSH = (after: string) =>
  JSON.stringify({
    ref: 'refs/heads/main',
    before: '6113728f27ae82c7b1a177c8d03f9e96e0adf246',
    after,
    repository: { id: 1296269, full_name: 'octo/hello' },
    pusher: { name: 'octo' },
  });
const TYPE_BODIES = [
  '{"id":"evt_1","type":"customer.created","data":{"name":"Ada","email":"ada@example.com"}}',
  '{"id":"evt_2","type":"customer.updated","data":{"name":"Bob","phone":"+1 555"},"livemode":false}',
  '{"id":"evt_3","type":"customer.deleted","data":{"name":null},"count":18446744073709551615}',
];

const noSideScroll = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

async function github(url: string, delivery: string, after: string): Promise<void> {
  await send(`${url}/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/abc',
      'x-github-event': 'push',
      'x-github-delivery': delivery,
    },
    body: GITHUB_PUSH(after),
  });
}

describe.skipIf(!haveChromium)('understanding deliveries in the page', () => {
  const rig = serverAndBrowser();

  it.each(views)(
    'diff, delivery timeline and types at $name',
    async (view) => {
      const context = await viewContext(rig.browser, view);
      const { page, url, errors } = await openPage(context, rig.server.baseUrl);
      const phone = view.width < 500;
      // The README's pictures: the laptop, light.
      const pictured = !phone && view.colorScheme === 'light';
      const shot = (name: string) => page.screenshot({ path: join(screenshotDir, name) });

      // 1. Two GitHub deliveries that differ in one JSON field and one header.
      await github(url, '72d3162e-cc78-11e3-81ab-4c9367dc0958', '0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c');
      await github(url, '9a1c6f3e-cc78-11e3-81ab-4c9367dc0958', '1f2b37f78e9a6fb02a7cb6d68ad4d8e02bd1fe2d');
      await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(2);
      const newest = await openRow(page, 0);
      await page.locator('#detail .compare button').click({ timeout: 5000 });
      const changes = page.locator('#detail .diff .diff-line:not(.diff-same)');
      await expect.poll(() => changes.count(), { timeout: 5000 }).toBe(2);
      const changed = await changes.allInnerTexts();
      expect(changed[0]).toMatch(/X-GitHub-Delivery[\s\S]*72d3162e[\s\S]*9a1c6f3e/i);
      expect(changed[1]).toMatch(/\$\.after[\s\S]*0d1a26e6[\s\S]*1f2b37f7/);
      expect(await page.locator('#detail .diff').innerText()).toContain('Body (JSON): 1 value changed');
      expect(await noSideScroll(page)).toBe(true);
      if (pictured) {
        await page.locator('#detail .compare').evaluate((element) => element.scrollIntoView({ block: 'start' }));
        await shot('screenshot-diff.png');
      }
      await checkAxe(page);
      await newest.close();

      // 2. Three Svix-style attempts with one webhook-id, answered 503, 503, 200 by a rule.
      await page.click('#response-toggle');
      await page.click('#rules-toggle');
      await page.selectOption('#rule-preset', { label: 'Fail N times, then succeed' });
      await page.fill('#rule-parameter', '2');
      await page.click('#rule-preset-add');
      await page.click('#response-form button[type=submit]');
      await expect.poll(() => page.locator('#response-toggle').textContent(), { timeout: 5000 }).toMatch(/· 1 rule$/);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const answer = await send(`${url}/svix`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': 'msg_2LJ8mz6Gp3Y4xgD5zr8T9',
            'webhook-timestamp': String(1_700_000_000 + i),
            'webhook-signature': `v1,c2lnbmF0dXJl${i}`,
          },
          body: '{"type":"invoice.paid","data":{"id":"in_1"}}',
        });
        statuses.push(answer.status);
      }
      expect(statuses).toEqual([503, 503, 200]);
      await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(5);
      const last = await openRow(page, 0);
      const timeline = page.locator('#detail .delivery');
      await timeline.waitFor({ timeout: 5000 });
      expect(await timeline.getAttribute('data-attempts')).toBe('3');
      expect(await timeline.locator('h3').textContent()).toBe('Delivery: 3 attempts');
      const attempts = await timeline.locator('.attempt').allInnerTexts();
      expect(attempts).toHaveLength(3);
      expect(attempts[0]).toMatch(
        /Attempt 1 · #3[\s\S]*503 by rule 1[\s\S]*next attempt .* later \(schedule: 5\.0 s\)/,
      );
      expect(attempts[1]).toMatch(/Attempt 2 · #4[\s\S]*503 by rule 1[\s\S]*next attempt .* later \(schedule: 5 min\)/);
      expect(attempts[2]).toMatch(/Attempt 3 · #5 \(this request\)[\s\S]*200 by the default answer/);
      expect(attempts[2]).not.toContain('next attempt');
      expect(await timeline.innerText()).toContain('webhook-id msg_2LJ8mz6Gp3Y4xgD5zr8T9');
      expect(await noSideScroll(page)).toBe(true);
      if (pictured) {
        // The picture for the README: the attempts in view, the applied-rules toast gone.
        await page.waitForFunction(
          () => getComputedStyle(document.getElementById('toast') as HTMLElement).opacity === '0',
          undefined,
          { timeout: 5000 },
        );
        await timeline.evaluate((element) => element.scrollIntoView({ block: 'center' }));
        await shot('screenshot-timeline.png');
      }
      await checkAxe(page);
      // Another attempt opens from the timeline.
      await timeline.getByRole('button', { name: 'Attempt 1 · #3' }).click();
      await expect
        .poll(() => page.locator('#detail .delivery .attempt-current').innerText(), { timeout: 5000 })
        .toContain('Attempt 1 · #3 (this request)');
      await last.close();
      if (phone && (await page.locator('#back-to-list').isVisible())) await page.click('#back-to-list');

      // The filter: retried deliveries only.
      await page.locator('#retried-filter').check();
      await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(3);
      expect(await page.locator('#count').textContent()).toMatch(/^3 shown/);
      await checkAxe(page);
      await page.locator('#retried-filter').uncheck();
      await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(5);

      // 3. Types from three bodies with different optional fields: the filter picks them.
      for (const body of TYPE_BODIES)
        await send(`${url}/stripe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(8);
      await page.fill('#filter', '/stripe');
      await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(3);
      await page.click('#types');
      const dialog = page.locator('#types-dialog');
      await dialog.waitFor({ timeout: 5000 });
      expect(await page.locator('#types-summary').textContent()).toContain(
        'From 3 JSON bodies of the 3 shown requests',
      );
      const ts = (await dialog.locator('.types-code').textContent()) ?? '';
      expect(ts).toMatch(/email\?: string;/);
      expect(ts).toMatch(/livemode\?: boolean;/);
      expect(ts).toContain('integers past 2^53');
      expect(ts).toMatch(/appears from #\d+|missing from #\d+/);
      expect(await compileWithBodies(ts, TYPE_BODIES)).toBe('');
      await dialog.getByRole('button', { name: 'zod' }).click();
      const zod = (await dialog.locator('.types-code').textContent()) ?? '';
      const schema = loadZodSchema(zod);
      for (const body of TYPE_BODIES) expect(schema.safeParse(JSON.parse(body)).success).toBe(true);
      await dialog.getByRole('button', { name: 'JSON Schema' }).click();
      expect(JSON.parse((await dialog.locator('.types-code').textContent()) ?? '')).toMatchObject({
        type: 'object',
        required: ['id', 'type', 'data'],
      });
      expect(await noSideScroll(page)).toBe(true);
      await checkAxe(page);
      await page.click('#types-close');
      await dialog.waitFor({ state: 'detached', timeout: 3000 });

      expect(errors).toEqual([]);
      await context.close();
      // Four scenes in one page, each with axe: longer than one check, above all on a busy machine.
    },
    60_000,
  );

  it('says so when a view cannot be loaded (its chunk refused), and the page goes on', async () => {
    const laptop = views.find((view) => view.width === 1280 && view.colorScheme === 'light') as (typeof views)[number];
    const context = await viewContext(rig.browser, laptop);
    const { page, url } = await openPage(context, rig.server.baseUrl);
    await page.route('**/chunks/**', (route) => route.abort());
    await send(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(1);
    await page.click('#types');
    await expect
      .poll(() => page.textContent('#toast'), { timeout: 5000 })
      .toBe('Types could not be loaded: reload the page to try again.');
    // click, not check(): the box unticks itself as soon as the load fails, which check() would take for a missed click.
    await page.locator('#retried-filter').click();
    await expect
      .poll(() => page.textContent('#toast'), { timeout: 5000 })
      .toBe('The retried filter could not be loaded: reload the page to try again.');
    expect(await page.locator('#retried-filter').isChecked()).toBe(false);
    await openRow(page, 0);
    await expect
      .poll(() => page.locator('#detail .insight-slot').last().textContent(), { timeout: 5000 })
      .toContain('could not be loaded: reload the page');
    // Once the chunks come again, the next request's detail has them.
    await page.unroute('**/chunks/**');
    await send(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":2}' });
    await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(2);
    await openRow(page, 0);
    await page.locator('#detail .compare button').click({ timeout: 5000 });
    await expect
      .poll(() => page.locator('#detail .diff .diff-line:not(.diff-same)').count(), { timeout: 5000 })
      .toBe(1);
    await context.close();
  });

  it('compares two 900 KB bodies that differ on every line, and types a body nested too deep, without stalling', async () => {
    const laptop = views.find((view) => view.width === 1280 && view.colorScheme === 'light') as (typeof views)[number];
    const context = await viewContext(rig.browser, laptop);
    const { page, url, errors } = await openPage(context, rig.server.baseUrl);
    const lines = (prefix: string) =>
      Array.from({ length: 40_000 }, (_, i) => `${prefix}-line-${i}-padding`).join('\n');
    await send(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: lines('a') });
    await send(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: lines('b') });
    await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(2);
    await openRow(page, 0);
    const started = Date.now();
    await page.locator('#detail .compare button').click({ timeout: 5000 });
    await page.locator('#detail .diff').waitFor({ timeout: 10_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await page.locator('#detail .diff-text-lines > li').count()).toBe(2000);
    expect(await page.locator('#detail .diff').innerText()).toContain('Too many lines to align');
    expect(await page.locator('#detail .diff').innerText()).toContain('78000 more changed lines not drawn.');

    // Nested past what is read as JSON: nothing to type, said so, and the page stays up.
    const deep = `${'['.repeat(5000)}1${']'.repeat(5000)}`;
    await send(`${url}/deep`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: deep });
    await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(3);
    await page.fill('#filter', '/deep');
    await expect.poll(() => rows(page).count(), { timeout: 5000 }).toBe(1);
    await page.click('#types');
    await expect
      .poll(() => page.locator('#types-summary').textContent(), { timeout: 5000 })
      .toBe('None of the 1 shown requests has a JSON body to type.');
    await page.click('#types-close');
    expect(errors).toEqual([]);
    await context.close();
  });
});
