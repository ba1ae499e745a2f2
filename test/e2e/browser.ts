import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium unless CHROMIUM_PATH names another. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const haveChromium = existsSync(chromiumPath);

if (!haveChromium) {
  const message =
    `\n*** e2e browser tests SKIPPED: no Chromium at ${chromiumPath}.\n` +
    '*** Install one (Debian/Ubuntu: apt-get install -y chromium) or set CHROMIUM_PATH.\n';
  if (process.env.REQUIRE_E2E === '1') throw new Error(`${message}*** REQUIRE_E2E=1: a missing browser is a failure.`);
  console.warn(message);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}
