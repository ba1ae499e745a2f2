import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { settings, startHere, toFlag } from '../../src/config.js';
import { README, settingsTables, withSettingsTables } from '../../scripts/settings-table.js';

describe("the README's settings tables", () => {
  it('are the ones generated from the groups in src/config.ts', () => {
    const readme = readFileSync(README, 'utf8');
    expect(readme, 'README.md is out of date: run `npm run docs:settings`').toBe(withSettingsTables(readme));
  });

  it('give every setting one row with its env var and flag, the ones to start with first', () => {
    const rows = settingsTables()
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    const envs = rows.map((row) => /^\| `([A-Z0-9_]+)` \| `--([a-z0-9-]+)`/.exec(row)?.slice(1));
    expect(envs.map((pair) => pair?.[0]).toSorted()).toEqual(
      Object.values(settings)
        .map((setting) => setting.env)
        .toSorted(),
    );
    for (const pair of envs) expect(pair?.[1]).toBe(toFlag(pair?.[0] ?? ''));
    expect(envs.slice(0, startHere.length).map((pair) => pair?.[0])).toEqual(startHere.map((key) => settings[key].env));
  });
});
