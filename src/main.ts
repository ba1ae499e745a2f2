import { readFileSync } from 'node:fs';
import closeWithGrace from 'close-with-grace';
import { nanoid } from 'nanoid';
import pino from 'pino';
import { AccessTokensError } from './access/access.js';
import { buildApp, type AppDeps } from './app.js';
import { createMemoryBus } from './one-process/memory-bus.js';
import { ConfigError, loadConfig, usesRedis, type Config } from './config.js';
import { createMemoryStore } from './one-process/memory-store.js';
import { createStoreByKind } from './one-process/store-by-kind.js';
import { DatabaseOpenError, openDatabase } from './one-process/sqlite-database.js';
import { createSqliteStore } from './one-process/sqlite-store.js';
import { onRedis } from './redis/clients.js';
import { storeLimits, type StoreLimits } from './store/store.js';

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

  const { server } = config;
  const log = pino({ level: server.logLevel });
  let stores: { deps: AppDeps; close: () => Promise<void> };
  try {
    // One name for this process: its leases on watched endpoints and its captures' idempotency keys.
    const instanceId = nanoid(10);
    stores = usesRedis(config.redis)
      ? onRedis(config.redis, storeLimits(config), log, instanceId)
      : oneProcess(config.storage, storeLimits(config), instanceId);
  } catch (error) {
    if (!(error instanceof DatabaseOpenError)) throw error;
    process.stderr.write(`hookwatch: ${error.message}\n`);
    process.exit(1);
  }
  const { deps, close } = stores;
  const tls =
    server.tlsCertFile !== undefined && server.tlsKeyFile !== undefined
      ? { cert: readFileSync(server.tlsCertFile), key: readFileSync(server.tlsKeyFile) }
      : undefined;
  let app: Awaited<ReturnType<typeof buildApp>>;
  try {
    app = await buildApp(config, { ...deps, logger: log, ...(tls ? { tls } : {}) });
  } catch (error) {
    if (!(error instanceof AccessTokensError)) throw error;
    process.stderr.write(`hookwatch: ${error.message}\n`);
    process.exit(2);
  }
  // SIGHUP reads ACCESS_TOKENS_FILE again: a token added works at once, a removed one stops
  // (its open sockets close at their next heartbeat). A bad file keeps the tokens as they were.
  process.on('SIGHUP', () => {
    try {
      app.log.info({ tokens: app.reloadAccess() }, 'access tokens reloaded');
    } catch (error) {
      app.log.error({ err: error }, 'access tokens not reloaded: the previous ones stay');
    }
  });

  // SIGHUP reloads the access tokens (below) rather than shutting down.
  closeWithGrace({ delay: SHUTDOWN_DELAY_MS, skip: ['SIGHUP'] }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an uncaught error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
    await close();
  });

  await app.listen({ host: server.host, port: server.port });
}

/**
 * One process without Redis: live endpoints in memory; kept ones in the SQLite file under
 * DATA_DIR, so they outlive a restart (DATA_DIR=none: in memory too).
 */
function oneProcess(
  storage: Config['storage'],
  limits: StoreLimits,
  instanceId: string,
): { deps: AppDeps; close: () => Promise<void> } {
  const bus = createMemoryBus();
  const live = createMemoryStore({ ...limits, bus });
  if (storage.dataDir === 'none') return { deps: { store: live, bus, instanceId }, close: async () => undefined };
  const db = openDatabase(storage.dataDir);
  const kept = createSqliteStore({ ...limits, maxDiskBytes: storage.maxDiskBytes, db, bus });
  return { deps: { store: createStoreByKind({ live, kept }), bus, instanceId }, close: async () => void db.close() };
}

main().catch((error: unknown) => {
  process.stderr.write(`hookwatch: failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
