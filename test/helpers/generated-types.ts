import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { root } from './cli.js';

/**
 * Compiles a generated TypeScript type with the project's tsc (strict), together with each body
 * assigned to it: resolves with tsc's output, '' when everything compiled.
 */
export async function compileWithBodies(typeSource: string, bodies: string[], name = 'WebhookBody'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hookwatch-types-'));
  try {
    const file = join(dir, 'check.ts');
    const uses = bodies.map((body, index) => `export const sample${index}: ${name} = ${body};`).join('\n');
    await writeFile(file, `${typeSource}\n${uses}\n`);
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    try {
      await promisify(execFile)(
        process.execPath,
        [tsc, '--noEmit', '--strict', '--target', 'ES2022', '--skipLibCheck', file],
        { cwd: dir },
      );
      return '';
    } catch (error) {
      return String((error as { stdout?: string }).stdout ?? error);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The schema a generated zod module exports, evaluated against this project's zod. */
export function loadZodSchema(code: string, name = 'WebhookBody'): z.ZodType {
  const body = code
    .split('\n')
    .filter((line) => !line.startsWith('import ') && !line.startsWith('export type '))
    .join('\n')
    .replace(`export const ${name} =`, 'return');
  return new Function('z', body)(z) as z.ZodType;
}
