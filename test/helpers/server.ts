import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import type { Bus } from '../../src/bus/bus.js';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { defaultConfig, type Config, type SettingValues } from '../../src/config.js';
import { createMemoryStore } from '../../src/one-process/memory-store.js';
import { storeLimits, type Store } from '../../src/store/store.js';

export interface TestServer {
  app: FastifyInstance;
  config: Config;
  store: Store;
  bus: Bus;
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** `ws://127.0.0.1:<port>` */
  wsUrl: string;
  /** Every log line the server wrote, as text. */
  logs: () => string;
  close: () => Promise<void>;
}

/** A real server on an ephemeral port on 127.0.0.1, logging at trace into memory. */
export async function startServer(
  overrides: Partial<SettingValues> = {},
  deps: { store?: Store; bus?: Bus; instanceId?: string; tls?: { cert: Buffer; key: Buffer } } = {},
): Promise<TestServer> {
  const config = defaultConfig({ host: '127.0.0.1', port: 0, logLevel: 'trace', ...overrides });
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString());
      callback();
    },
  });
  const logger = pino({ level: config.server.logLevel }, sink);
  const bus = deps.bus ?? createMemoryBus();
  const store = deps.store ?? createMemoryStore({ ...storeLimits(config), bus });
  const app = await buildApp(config, {
    store,
    bus,
    logger,
    ...(deps.instanceId ? { instanceId: deps.instanceId } : {}),
    ...(deps.tls ? { tls: deps.tls } : {}),
  });
  await app.listen({ host: config.server.host, port: config.server.port });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    app,
    config,
    store,
    bus,
    baseUrl: `${deps.tls ? 'https' : 'http'}://127.0.0.1:${address.port}`,
    wsUrl: `${deps.tls ? 'wss' : 'ws'}://127.0.0.1:${address.port}`,
    logs: () => lines.join(''),
    close: () => app.close(),
  };
}
