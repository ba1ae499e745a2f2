// Bundles the page: client/src/main.ts -> client/dist/app.js (and chunks/), and copies the static files.
// Run by `npm run build:client`; `npm start` runs it when client/dist is missing.
import { cp, mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

await rm(here('./dist'), { recursive: true, force: true });
await mkdir(here('./dist'), { recursive: true });
await build({
  // The page loads app.js; views only some readers open (the diff, the delivery timeline, the
  // types) are split into chunks/ and fetched by their dynamic import(), to keep the first load small.
  entryPoints: [{ in: here('./src/main.ts'), out: 'app' }],
  outdir: here('./dist'),
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  minify: true,
  sourcemap: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  legalComments: 'none',
  logLevel: 'warning',
});
await cp(here('./public'), here('./dist'), { recursive: true });
