import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errors } from '../../src/errors.js';

describe('errors', () => {
  it('documents every error code with its status', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    for (const [code, make] of Object.entries(errors)) {
      const error = (make as (...args: unknown[]) => { statusCode: number })('x');
      expect(doc, code).toMatch(new RegExp(`\\| \`${code}\` \\| ${error.statusCode} \\|`));
    }
  });
});
