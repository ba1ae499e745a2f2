// The detail (issue 25): the signature panel only where a signature is, and on a phone copy buttons
// beside their values, times in one piece and no keyboard hints on a touch screen.
import { createHmac } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import { checkAxe, openPage, openRow, rows, VIEWS, viewContext, serverAndBrowser } from './page-helpers.js';

/** How many lines the first match of `pattern` in the element's text takes. */
function linesOf(page: Page, selector: string, pattern: RegExp): Promise<number> {
  return page
    .locator(selector)
    .first()
    .evaluate(
      (element, { source, flags }) => {
        const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
        const nodes: Text[] = [];
        for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node as Text);
        const text = nodes.map((node) => node.data).join('');
        const match = new RegExp(source, flags).exec(text);
        if (!match) return -1;
        const at = (offset: number): [Text, number] => {
          for (const node of nodes) {
            if (offset <= node.data.length) return [node, offset];
            offset -= node.data.length;
          }
          throw new Error('offset past the text');
        };
        const range = document.createRange();
        range.setStart(...at(match.index));
        range.setEnd(...at(match.index + match[0].length));
        return new Set([...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.top)))
          .size;
      },
      { source: pattern.source, flags: pattern.flags },
    );
}

describe.skipIf(!haveChromium)('the detail panels and the detail on a phone (issue 25)', () => {
  const rig = serverAndBrowser();

  for (const view of VIEWS) {
    it(`${view.name}: shows the Verify signature panel where a signature header is, and a small action elsewhere`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      const body = '{"action":"opened"}';
      const signature = `sha256=${createHmac('sha256', 'secret').update(body).digest('hex')}`;
      await send(`${url}/github`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
        body,
      });
      await send(`${url}/form`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'a=1',
      });
      await send(`${url}/xml`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<a>1</a>' });
      await send(`${url}/binary`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.from([0, 0xff, 0xfe]),
      });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(4);
      const panel = page.locator('#detail section.verify');

      // Newest first: binary, xml, form; then the signed one.
      for (const index of [0, 1, 2]) {
        const opened = await openRow(page, index);
        expect(await panel.locator('form').count()).toBe(0);
        expect(await panel.locator('h3').count()).toBe(0);
        const action = panel.getByRole('button', { name: 'Verify signature…' });
        expect(await action.isVisible()).toBe(true);
        if (index === 2) {
          await checkAxe(page);
          await action.click();
          expect(await action.getAttribute('aria-expanded')).toBe('true');
          expect(await panel.getByLabel('Sender').isVisible()).toBe(true);
          expect(await panel.textContent()).toContain('No known signature header found: choose the sender.');
        }
        await opened.close();
      }
      const opened = await openRow(page, 3);
      expect(await panel.locator('h3').textContent()).toBe('Verify signature');
      expect(await panel.getByLabel('Sender').inputValue()).toBe('github');
      expect(await panel.getByRole('button', { name: 'Verify signature…' }).count()).toBe(0);
      await checkAxe(page);
      await opened.close();
      await context.close();
    });
  }

  for (const view of VIEWS.filter(({ width }) => width < 500)) {
    it(`${view.name}: on a phone, copy buttons sit beside their values, times do not break, and no keyboard hints show`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      expect(await page.locator('#empty').isVisible()).toBe(true);
      expect(await page.locator('#empty').innerText()).not.toMatch(/\bj\b.*\bk\b|Keys:/s);
      await checkAxe(page);

      await send(`${url}/github/push?delivery=42&tag=a`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'push',
          'x-request-id': 'b3f1c0de-9a7e-4d2b-8c11-0f5e2a9d7c44',
        },
        body: '{"ref":"refs/heads/main"}',
      });
      await rows(page).first().waitFor({ timeout: 3000 });
      await rows(page).first().tap();
      await page.locator('#detail article').waitFor({ state: 'visible', timeout: 2000 });

      // Each Copy button's label is on the line of its value's first line, to its right.
      const offsets = await page.locator('#detail table.pairs tr:has(.copy-value)').evaluateAll((trs) =>
        trs.map((tr) => {
          const value = tr.querySelector('td.value') as HTMLElement;
          const button = tr.querySelector('.copy-value') as HTMLElement;
          const line = (node: Node) => {
            const range = document.createRange();
            range.selectNodeContents(node);
            return [...range.getClientRects()].filter((rect) => rect.width > 0)[0] as DOMRect;
          };
          const valueLine = line(value);
          const label = line(button);
          return {
            name: tr.querySelector('th')?.textContent,
            off: Math.abs(valueLine.top + valueLine.height / 2 - (label.top + label.height / 2)) <= 4,
            beside: button.getBoundingClientRect().left >= value.getBoundingClientRect().right - 1,
          };
        }),
      );
      expect(offsets.length).toBeGreaterThan(5);
      expect(offsets.filter((row) => !row.off || !row.beside)).toEqual([]);

      // The time of day in one piece: "7:21:26.570 PM" never as "…26.570 P / M".
      const time = page
        .locator('#detail table.pairs tr', { has: page.locator('th', { hasText: /^Time$/ }) })
        .locator('td');
      expect(await time.textContent()).toMatch(/\d{1,2}:\d\d:\d\d\.\d{3}\s?[AP]M/);
      expect(await linesOf(page, '#detail table.pairs tr:first-child td', /\d{1,2}:\d\d:\d\d\.\d{3}\s?[AP]M/)).toBe(1);
      expect(await linesOf(page, '#detail table.pairs tr:nth-child(2) td', /\d\d:\d\d:\d\d\.\d{3} UTC/)).toBe(1);
      await checkAxe(page);

      // A mouse and keyboard at the same width do see the hints.
      const desk = await rig.browser.newContext({
        viewport: { width: view.width, height: view.height },
        colorScheme: view.colorScheme,
      });
      const deskPage = (await openPage(desk, rig.server.baseUrl)).page;
      expect(await deskPage.locator('#empty').innerText()).toContain('Keys:');
      await desk.close();
      await context.close();
    });
  }
});
