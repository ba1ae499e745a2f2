// The page's files as served (issue 34, item 18): app.js and its chunks under the page's CSP, and
// never a source map, whatever the build left in the folder.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageRoute } from '../../src/http/page-route.js';

describe('the page route', () => {
  let app: FastifyInstance;
  let base: string;
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'hookwatch-page-'));
    await mkdir(join(root, 'chunks'));
    for (const [name, text] of [
      ['index.html', '<!doctype html>'],
      ['app.js', 'import("./chunks/xml-1.js")'],
      ['app.js.map', '{}'],
      ['chunks/xml-1.js', 'export {}'],
      ['chunks/xml-1.js.map', '{}'],
    ]) {
      await writeFile(join(root, name as string), text as string);
    }
    app = Fastify();
    await app.register(pageRoute, { root });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await app?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('serves the entry and the chunks it imports, under the page CSP', async () => {
    for (const path of ['/', '/app.js', '/chunks/xml-1.js']) {
      const answer = await fetch(`${base}${path}`);
      expect([path, answer.status]).toEqual([path, 200]);
      expect(answer.headers.get('content-security-policy')).toContain("script-src 'self'");
    }
  });

  it('serves no source map', async () => {
    for (const path of ['/app.js.map', '/chunks/xml-1.js.map', '/chunks/xml-1.js.MAP'.toLowerCase()]) {
      expect([path, (await fetch(`${base}${path}`)).status]).toEqual([path, 404]);
    }
  });
});
