// The filter and the export (issue 25): decoded form and query values are searched, a filter that
// hides the open request opens the first match, the export takes what is shown, and HAR follows
// HAR 1.2 (checked against its JSON schema).
import { createRequire } from 'node:module';
import { Ajv, type AnySchemaObject } from 'ajv';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { send } from '../helpers/http.js';
import { haveChromium } from './browser.js';
import {
  checkAxe,
  downloadText,
  openPage,
  openRow,
  rows,
  VIEWS,
  viewContext,
  serverAndBrowser,
} from './page-helpers.js';

const require = createRequire(import.meta.url);

/**
 * HAR 1.2's schema (the har-schema package), made strict the way the spec is: an object holds
 * the fields the spec names, and custom ones only when their names start with `_`.
 */
function harValidator() {
  const schemas = require('har-schema') as Record<string, AnySchemaObject>;
  const strict = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strict);
    if (!node || typeof node !== 'object') return node;
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node))
      copy[key] =
        key === 'properties'
          ? Object.fromEntries(Object.entries(value as object).map(([name, sub]) => [name, strict(sub)]))
          : strict(value);
    if (copy.type === 'object' && copy.properties)
      Object.assign(copy, { patternProperties: { '^_': {} }, additionalProperties: false });
    return copy;
  };
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addMetaSchema(require('ajv/dist/refs/json-schema-draft-06.json') as AnySchemaObject);
  ajv.addFormat('date-time', (value: string) => !Number.isNaN(Date.parse(value)));
  ajv.addFormat('ipv4', /^(\d{1,3}\.){3}\d{1,3}$/);
  ajv.addFormat('ipv6', /^[0-9a-f:.]+$/i);
  ajv.addFormat('uri', (value: string) => URL.canParse(value));
  for (const [name, schema] of Object.entries(schemas))
    if (name !== 'har') ajv.addSchema(strict(schema) as AnySchemaObject);
  return ajv.compile(strict(schemas.har) as AnySchemaObject);
}

interface HarEntry {
  request: {
    method: string;
    url: string;
    postData?: { mimeType: string; text?: string; _encoding?: string; comment?: string; encoding?: unknown };
  };
  response: { status: number; statusText: string; content: { size: number; mimeType: string } };
}

const selected = (page: Page) => page.locator('#log [aria-selected="true"]').textContent();
const detailLabel = (page: Page) => page.locator('#detail article').getAttribute('aria-label');

describe.skipIf(!haveChromium)('the filter and the export (issue 25)', () => {
  const rig = serverAndBrowser();

  for (const view of VIEWS) {
    it(`${view.name}: finds decoded form fields and query values`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      await send(`${url}/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=ada%40example.com&name=Ada+Lovelace',
      });
      await send(`${url}/lookup?who=grace%40example.com&q=a%2Bb`, { method: 'GET' });
      await send(`${url}/other`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"email":"someone@example.org"}',
      });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(3);

      const shown = async (text: string) => {
        await page.fill('#filter', text);
        return rows(page).locator('.path').allTextContents();
      };
      expect(await shown('ada@example.com')).toEqual(['/signup']);
      expect(await shown('Ada Lovelace')).toEqual(['/signup']);
      expect(await shown('grace@example.com')).toEqual(['/lookup?who=grace%40example.com&q=a%2Bb']);
      expect(await shown('a+b')).toEqual(['/lookup?who=grace%40example.com&q=a%2Bb']);
      expect(await shown('@example')).toHaveLength(3);
      await checkAxe(page);
      await context.close();
    });

    it(`${view.name}: a filter that hides the open request opens the first match, and says so in the detail when nothing matches`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      for (const name of ['alpha', 'beta', 'gamma'])
        await send(`${url}/${name}`, { method: 'POST', body: `${name} body` });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(3);
      const opened = await openRow(page, 2);
      expect(await detailLabel(page)).toBe('POST request #1');
      await opened.close();

      await page.fill('#filter', 'beta');
      expect(await selected(page)).toContain('/beta');
      await expect.poll(() => detailLabel(page), { timeout: 2000 }).toBe('POST request #2');

      // Two matches: the open one stays open.
      await page.fill('#filter', 'a body');
      expect(await rows(page).count()).toBe(3);
      expect(await selected(page)).toContain('/beta');

      await page.fill('#filter', 'nothing like this');
      await expect
        .poll(() => page.locator('#detail').textContent(), { timeout: 2000 })
        .toContain('No request matches “nothing like this”.');
      expect(await page.locator('#detail article').count()).toBe(0);
      await checkAxe(page);

      await page.click('#clear-filter');
      expect(await selected(page)).toContain('/beta');
      await context.close();
    });

    it(`${view.name}: exports what the filter shows, and says so on the button`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      for (const name of ['alpha', 'beta', 'gamma']) await send(`${url}/${name}`, { method: 'POST', body: name });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(3);
      const exportButton = page.locator('#export');
      expect(await exportButton.textContent()).toBe('Export all');

      await page.fill('#filter', 'beta');
      expect(await exportButton.textContent()).toBe('Export shown (1)');
      const json = JSON.parse(await downloadText(page, () => exportButton.click())) as CapturedRequest[];
      expect(json.map((request) => request.subPath)).toEqual(['/beta']);
      await page.selectOption('#export-format', 'har');
      const har = JSON.parse(await downloadText(page, () => exportButton.click())) as { log: { entries: HarEntry[] } };
      expect(har.log.entries.map((entry) => new URL(entry.request.url).pathname.endsWith('/beta'))).toEqual([true]);

      await page.fill('#filter', '');
      expect(await exportButton.textContent()).toBe('Export all');
      const all = JSON.parse(await downloadText(page, () => exportButton.click())) as { log: { entries: HarEntry[] } };
      expect(all.log.entries).toHaveLength(3);
      await checkAxe(page);
      await context.close();
    });

    it(`${view.name}: exports HAR 1.2 that its schema accepts, binary bodies marked as base64 and the answer's status filled in`, async () => {
      const context = await viewContext(rig.browser, view);
      const { page, url } = await openPage(context, rig.server.baseUrl);
      await page.click('#response-toggle');
      await page.fill('#response-status', '201');
      await page.click('#response-form button[type=submit]');
      await expect
        .poll(() => page.locator('#response-toggle').textContent(), { timeout: 3000 })
        .toMatch(/^Answer: 201 /);

      await send(`${url}/json?x=1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"ok":true}',
      });
      await send(`${url}/form`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'a=1&b=%40',
      });
      await send(`${url}/binary`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe, 0x10]),
      });
      await send(`${url}/empty`, { method: 'GET' });
      await expect.poll(() => rows(page).count(), { timeout: 3000 }).toBe(4);

      await page.selectOption('#export-format', 'har');
      const har = JSON.parse(await downloadText(page, () => page.click('#export'))) as { log: { entries: HarEntry[] } };
      const validate = harValidator();
      expect(validate(har) ? [] : validate.errors).toEqual([]);

      const entries: Record<string, HarEntry> = Object.fromEntries(
        har.log.entries.map((entry) => [new URL(entry.request.url).pathname.split('/').pop() ?? '', entry]),
      );
      expect(entries.json?.request.postData).toEqual({ mimeType: 'application/json', text: '{"ok":true}' });
      expect(entries.form?.request.postData?.text).toBe('a=1&b=%40');
      const binary = entries.binary?.request.postData;
      expect(binary?.encoding).toBeUndefined();
      expect(binary?._encoding).toBe('base64');
      expect(Buffer.from(binary?.text ?? '', 'base64')).toEqual(
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe, 0x10]),
      );
      expect(binary?.comment).toMatch(/binary/i);
      for (const entry of Object.values(entries)) {
        expect(entry.response.status).toBe(201);
        expect(entry.response.statusText).toBe('Created');
        expect(entry.response.content.size).toBe(-1);
      }
      await context.close();
    });
  }
});
