// `npm start` on a fresh clone: build the server and the page when they are missing, so the
// README's `npm install && npm start` needs nothing else.
import { existsSync } from 'node:fs';
import { execSync } from 'node:child_process';

const run = (command) => execSync(command, { stdio: 'inherit' });
if (!existsSync('dist/main.js')) run('npm run build:server');
if (!existsSync('client/dist/index.html')) run('npm run build:client');
