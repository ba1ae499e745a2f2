import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const bundle = new URL('../../client/dist/app.js', import.meta.url);

/**
 * app.js and the chunks it imports statically (client/build.mjs splits code shared with the views
 * loaded by import() into chunks/): everything the first load fetches, each file gzipped alone.
 */
function firstLoadFiles(entry: URL, seen = new Set<string>()): URL[] {
  if (seen.has(entry.href)) return [];
  seen.add(entry.href);
  const text = readFileSync(entry, 'utf8');
  // Static imports only: `import{…}from"./chunks/x.js"` or `import"./chunks/x.js"`, never `import("…")`.
  const imports = [...text.matchAll(/import(?:\{[^}]*\}from|\s*[\w$]+\s*from|)\s*"(\.\/[^"]+)"/g)].map(
    (match) => new URL(match[1] as string, entry),
  );
  return [entry, ...imports.flatMap((url) => firstLoadFiles(url, seen))];
}

// `npm test` builds the page before running the tests; a bare `vitest run` may not have.
describe.skipIf(!existsSync(bundle))('the page bundle', () => {
  it('stays within 60 KB gzipped on first load (app.js and the chunks it imports statically)', () => {
    const files = firstLoadFiles(bundle);
    const bytes = files.reduce((sum, file) => sum + gzipSync(readFileSync(file)).length, 0);
    expect(bytes).toBeLessThanOrEqual(60 * 1024);
  });
});
