import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const bundle = new URL('../../client/dist/app.js', import.meta.url);

// `npm test` builds the page before running the tests; a bare `vitest run` may not have.
describe.skipIf(!existsSync(bundle))('the page bundle', () => {
  it('stays within 60 KB gzipped', () => {
    expect(gzipSync(readFileSync(bundle)).length).toBeLessThanOrEqual(60 * 1024);
  });
});
