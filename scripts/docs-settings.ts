import { readFileSync, writeFileSync } from 'node:fs';
import { README, withSettingsTables } from './settings-table.js';

// Rewrites README.md's settings tables from the groups in src/config.ts (`npm run docs:settings`).
const before = readFileSync(README, 'utf8');
const after = withSettingsTables(before);
if (after !== before) writeFileSync(README, after);
process.stdout.write(after === before ? 'README.md settings: already up to date\n' : 'README.md settings: rewritten\n');
