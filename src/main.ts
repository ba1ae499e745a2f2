import { readFileSync } from 'node:fs';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { createMemoryBus } from './bus/memory-bus.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createMemoryStore } from './store/memory-store.js';
import { storeLimits } from './store/store.js';

/** How long shutdown may take before the process exits anyway. */
const SHUTDOWN_DELAY_MS = 10_000;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`hookwatch: ${error.message}\nSee README.md#settings for every setting.\n`);
    process.exit(2);
  }

  const bus = createMemoryBus();
  const store = createMemoryStore({ ...storeLimits(config), bus });
  const tls =
    config.tlsCertFile !== undefined && config.tlsKeyFile !== undefined
      ? { cert: readFileSync(config.tlsCertFile), key: readFileSync(config.tlsKeyFile) }
      : undefined;
  const app = await buildApp(config, { store, bus, ...(tls ? { tls } : {}) });

  closeWithGrace({ delay: SHUTDOWN_DELAY_MS }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an uncaught error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
  });

  await app.listen({ host: config.host, port: config.port });
}

main().catch((error: unknown) => {
  process.stderr.write(`hookwatch: failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
