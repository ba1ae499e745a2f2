// Answer rules in the page (product decision 14): the rules editor in the answer form, its
// presets, the server's refusals marked on the rule's field, the status and the rule each sender
// got in the list, and the detail's "answered by" and "which rule would answer now".
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { SocketClient } from '../helpers/socket-client.js';
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
  type View,
} from './page-helpers.js';

const laptop = VIEWS.find((view) => view.width === 1280 && view.colorScheme === 'light') as View;

/** Slack's documented url_verification request. */
const SLACK_CHECK = {
  token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
  challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
  type: 'url_verification',
};

/** Unfolds the answer form and its rules. */
async function openRules(page: Page): Promise<void> {
  await page.click('#response-toggle');
  await page.click('#rules-toggle');
}

/** Picks a preset from the menu (with its number, for those that ask for one) and adds it. */
async function addPreset(page: Page, label: string, n?: number): Promise<void> {
  await page.selectOption('#rule-preset', { label });
  if (n !== undefined) {
    expect(await page.locator('#rule-parameter').isVisible()).toBe(true);
    await page.fill('#rule-parameter', String(n));
  }
  await page.click('#rule-preset-add');
}

/** Applies the form and waits until the answer with `rules` rules comes back. */
async function apply(page: Page, rules: number): Promise<void> {
  await page.click('#response-form button[type=submit]');
  await expect
    .poll(() => page.locator('#response-toggle').textContent(), { timeout: 3000 })
    .toMatch(new RegExp(`· ${rules} rules?$`));
}

const noSideScroll = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

describe.skipIf(!haveChromium)('answer rules in the page', () => {
  const rig = serverAndBrowser();

  it('a new user adds the Slack preset, and Slack’s URL check gets its challenge back; the row shows the rule answered', async () => {
    const context = await viewContext(rig.browser, laptop);
    const { page, url, errors } = await openPage(context, rig.server.baseUrl);
    await openRules(page);
    await addPreset(page, 'Slack URL verification');
    expect(await page.locator('#rules-list .rule-summary').textContent()).toBe(
      'POST, json type=url_verification → 200 text/plain',
    );
    await apply(page, 1);

    const answer = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(SLACK_CHECK),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await answer.text()).toBe(SLACK_CHECK.challenge);

    await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(1);
    const row = rows(page).first();
    // In words for a screen reader, the status and the mark alike (the colour is extra).
    expect(await row.locator('.answer-status').textContent()).toBe('answered 200');
    expect(await row.locator('.answer-mark').textContent()).toBe('answered by rule 1');
    expect(await row.locator('.answer-mark').getAttribute('title')).toBe('Answered by rule 1 “Slack URL verification”');
    await openRow(page, 0);
    await expect
      .poll(() => page.locator('#detail .answer-origin').innerText(), { timeout: 3000 })
      .toContain('Answered by rule 1 “Slack URL verification”.');
    expect(await page.locator('#detail .answer-origin').innerText()).toContain(
      'Which rule would answer this request now? Rule 1 “Slack URL verification”.',
    );
    expect(errors).toEqual([]);
    await context.close();
  });

  it('"Fail N times, then succeed" with 3: senders get 503 three times, then 200', async () => {
    const context = await viewContext(rig.browser, laptop);
    const { page, url } = await openPage(context, rig.server.baseUrl);
    await openRules(page);
    await addPreset(page, 'Fail N times, then succeed', 3);
    await apply(page, 1);

    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await send(url, { method: 'POST', body: `try ${i}` })).status);
    expect(statuses).toEqual([503, 503, 503, 200]);

    await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(4);
    expect(await rows(page).locator('.answer-status').allTextContents()).toEqual([
      'answered 200',
      'answered 503',
      'answered 503',
      'answered 503',
    ]);
    expect(await rows(page).first().locator('.answer-mark').count()).toBe(0);
    await openRow(page, 0);
    await expect
      .poll(() => page.locator('#detail .answer-origin').innerText(), { timeout: 3000 })
      .toContain('Answered by the default answer.');
    expect(await page.locator('#detail .answer-origin').innerText()).toContain(
      'Rule 1 “fail 3 times first”, while its 3 times last; else the default answer.',
    );
    await context.close();
  });

  for (const view of VIEWS) {
    it(`${view.name}: the editor with two rules open fits the width and passes axe`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page } = await openPage(context, rig.server.baseUrl);
      await openRules(page);
      await addPreset(page, 'Twitch EventSub verification');
      await addPreset(page, 'Fail X % of requests', 25);
      for (const toggle of await page.locator('#rules-list .rule-toggle').all()) await toggle.click();
      expect(await page.locator('#rules-list .rule-fields:visible').count()).toBe(2);
      expect(await page.locator('#response-toggle').textContent()).toBe(
        'Answer: 200 application/json, no delay (edits not applied)',
      );
      expect(await noSideScroll(page)).toBe(true);
      await page.locator('#rules-list .rule').nth(1).scrollIntoViewIfNeeded();
      await page.screenshot({
        path: join(screenshotDir, `hookwatch-rules-${view.width}-${view.colorScheme}.png`),
        fullPage: view.width < 500,
      });
      await checkAxe(page);

      // Moved down and back up, deleted: the numbers and the buttons' names follow.
      await page.click('#rules-list [aria-label="Move rule 1 down"]');
      expect(await page.locator('#rules-list .rule-toggle').allTextContents()).toEqual([
        '1. fail 25 %',
        '2. Twitch EventSub verification',
      ]);
      await page.click('#rules-list [aria-label="Delete rule 1"]');
      expect(await page.locator('#rules-list .rule-toggle').allTextContents()).toEqual([
        '1. Twitch EventSub verification',
      ]);
      expect(await page.locator('#rules-toggle').textContent()).toBe('Rules (1)');
      await context.close();
    });
  }

  it('marks a rule status the server refuses on that rule’s status field, in words', async () => {
    const context = await viewContext(rig.browser, laptop);
    const { page } = await openPage(context, rig.server.baseUrl);
    await openRules(page);
    await addPreset(page, 'Slack URL verification');
    await page.click('#rule-add');
    const second = page.locator('#rules-list .rule').nth(1);
    await second.locator('[id$="-name"]').fill('fail three');
    await second.locator('[id$="-status"]').fill('302');
    // Fold it, so the refusal has to unfold it again.
    await second.locator('.rule-toggle').click();
    await page.click('#response-form button[type=submit]');

    const status = second.locator('[id$="-status"]');
    await expect.poll(() => status.getAttribute('aria-invalid'), { timeout: 3000 }).toBe('true');
    const note = page.locator(`#${await status.getAttribute('aria-describedby')}`);
    expect(await note.isVisible()).toBe(true);
    expect(await note.textContent()).toBe("Status 302 can't be used: choose 200–299 or 400–599.");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe(await status.getAttribute('id'));
    // Only that field: the first rule and the default answer are fine.
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(1);
    // Nothing was applied.
    expect(await page.locator('#response-toggle').textContent()).toBe(
      'Answer: 200 application/json, no delay (edits not applied)',
    );
    await page.screenshot({ path: join(screenshotDir, 'hookwatch-rules-refused-1280.png') });
    await checkAxe(page);

    await status.fill('503');
    expect(await status.getAttribute('aria-invalid')).toBeNull();
    await apply(page, 2);
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(0);
    await context.close();
  });

  it('says when the local app answers senders, and marks the rows it answered', async () => {
    const context = await viewContext(rig.browser, laptop);
    const { page, url } = await openPage(context, rig.server.baseUrl);
    const [endpointId, key] = new URL(page.url()).hash.slice(1).split('.') as [string, string];
    const { client } = await SocketClient.join(rig.server.wsUrl, endpointId, key);
    client.send({ type: 'claim-responder' });
    await page.locator('#responder-note').waitFor({ state: 'visible', timeout: 3000 });
    expect(await page.locator('#responder-note').innerText()).toContain(
      'Your local app answers senders (hookwatch forward --respond)',
    );

    const sent = send(url, { method: 'POST', body: 'hello' });
    const { request } = await client.next('request');
    client.send({
      type: 'local-answer',
      seq: request.seq,
      status: 201,
      headers: [['X-Local', '1']],
      body: 'made',
      bodyEncoding: 'utf8',
    });
    expect((await sent).status).toBe(201);
    await expect
      .poll(() => rows(page).first().locator('.answer-mark').textContent(), { timeout: 3000 })
      .toBe('answered by local app');
    expect(await rows(page).first().locator('.answer-status').textContent()).toBe('answered 201');
    await openRow(page, 0);
    expect(await page.locator('#detail .answer-origin').innerText()).toContain('Answered by your local app.');

    client.socket.close();
    await page.locator('#responder-note').waitFor({ state: 'hidden', timeout: 5000 });
    await context.close();
  });
});
