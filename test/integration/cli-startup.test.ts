import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, root, runCli } from '../helpers/cli.js';

/**
 * `hookwatch --help` must not wait for what only a command needs: it ran every command's
 * imports (ws, the signature checks, node:http…) before printing a line. A resolve hook,
 * preloaded with NODE_OPTIONS=--import, writes each module the CLI process loads to a file.
 */
describe('hookwatch startup', () => {
  let dir: string;
  beforeAll(async () => {
    await ensureCliBuilt();
    dir = await mkdtemp(join(tmpdir(), 'hookwatch-startup-'));
    await writeFile(
      join(dir, 'hooks.mjs'),
      `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (result.url.startsWith('file:')) appendFileSync(process.env.HOOKWATCH_LOAD_LOG, result.url + '\\n');
  return result;
}
`,
    );
    await writeFile(
      join(dir, 'register.mjs'),
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`,
    );
  }, 120_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** The project files (relative to the checkout) the CLI loads for `args`. */
  async function loaded(args: string[]): Promise<string[]> {
    const log = join(dir, `${args.join('_')}.log`);
    await writeFile(log, '');
    const result = await runCli(args, {
      env: { NODE_OPTIONS: `--import=${pathToFileURL(join(dir, 'register.mjs')).href}`, HOOKWATCH_LOAD_LOG: log },
    });
    expect(result.code, result.stderr).toBe(0);
    const rootUrl = pathToFileURL(root).href.replace(/\/?$/, '/');
    return [
      ...new Set(
        (await readFile(log, 'utf8'))
          .split('\n')
          .filter((line) => line.startsWith(rootUrl))
          .map((line) => line.slice(rootUrl.length)),
      ),
    ];
  }

  it('--help and --version load the entry point and no command, no dependency', async () => {
    for (const args of [['--help'], ['--version']]) {
      const files = await loaded(args);
      expect(files).toContain('dist/cli/main.js');
      expect({
        args,
        files: files.filter(
          (file) =>
            file.includes('node_modules/') ||
            /\/(forward|tail|create|live-follower|verify|send-request)\.js$|\/signatures\//.test(file),
        ),
      }).toEqual({ args, files: [] });
    }
  });

  it("a command's --help loads no dependency (ws is loaded only to connect)", async () => {
    for (const command of ['create', 'tail', 'forward']) {
      const files = await loaded([command, '--help']);
      expect(files).toContain(`dist/cli/${command}.js`);
      expect({ command, files: files.filter((file) => file.includes('node_modules/')) }).toEqual({
        command,
        files: [],
      });
    }
  });
});
