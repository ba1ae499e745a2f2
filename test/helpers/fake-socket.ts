import { EventEmitter } from 'node:events';
import pino from 'pino';
import type { WebSocket } from 'ws';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { defaultConfig, type Config, type SettingValues } from '../../src/config.js';
import { createEndpointService } from '../../src/endpoints/endpoint-service.js';
import { createHub, type Hub } from '../../src/socket/hub.js';
import { SocketSession, type SessionContext } from '../../src/socket/socket-session.js';
import { createMetrics } from '../../src/metrics.js';
import type { ServerMessage } from '../../src/shared/protocol.js';
import { decodeServerMessage } from '../../src/shared/request-frame.js';
import { createMemoryStore } from '../../src/one-process/memory-store.js';
import { storeLimits, type Store } from '../../src/store/store.js';

/**
 * A stand-in for a ws socket with no TCP behind it: what the server writes arrives in `sent`
 * (parsed), and closing it calls the session's onClose as socket-route's listener would.
 */
export class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  protocol = 'hookwatch.v1';
  readonly sent: ServerMessage[] = [];
  closeCode: number | undefined;

  send(data: Buffer | string, options?: { binary?: boolean }): void {
    this.sent.push(decodeServerMessage(options?.binary ? (data as Buffer) : data.toString()));
  }

  ping(_data: unknown, _mask: unknown, done?: () => void): void {
    done?.();
  }

  close(code?: number): void {
    if (this.readyState !== 1) return;
    this.readyState = 3;
    this.closeCode = code;
    this.emit('close', code);
  }

  terminate(): void {
    this.close(1006);
  }

  of<T extends ServerMessage['type']>(type: T): Array<Extract<ServerMessage, { type: T }>> {
    return this.sent.filter((message): message is Extract<ServerMessage, { type: T }> => message.type === type);
  }
}

export interface SessionRig {
  config: Config;
  store: Store;
  hub: Hub;
  context: SessionContext;
  /** A session on a new fake socket, closed as a real one would be. */
  open(): { socket: FakeSocket; session: SocketSession; text: (message: unknown) => void };
  close(): Promise<void>;
}

/** The live session's world on the memory store and bus, with a store the test may wrap. */
export function sessionRig(
  overrides: Partial<SettingValues> = {},
  wrapStore: (store: Store) => Store = (store) => store,
): SessionRig {
  const config = defaultConfig({ logLevel: 'silent', ...overrides });
  const bus = createMemoryBus();
  const store = wrapStore(createMemoryStore({ ...storeLimits(config), bus }));
  const log = pino({ level: 'silent' });
  const hub = createHub({
    store,
    bus,
    instanceId: 'test',
    leaseMs: config.endpoints.leaseMs,
    graceMs: config.endpoints.graceMs,
    maxWatchersPerEndpoint: config.endpointLimits.maxWatchersPerEndpoint,
    log,
  });
  const metrics = createMetrics({
    countEndpoints: async () => 0,
    countWatchers: () => hub.watcherTotal(),
    storeStats: () => store.stats(),
    readingBytes: () => 0,
    openConnections: () => 0,
    apiAnswerBytes: () => 0,
  });
  const service = createEndpointService({ store, bus, config });
  const context: SessionContext = {
    config,
    store,
    service,
    hub,
    metrics,
    log,
    countCreate: undefined,
    onSlowWatcher: () => metrics.reject('slow_watcher'),
  };
  return {
    config,
    store,
    hub,
    context,
    open() {
      const socket = new FakeSocket();
      const session = new SocketSession(socket as unknown as WebSocket, context, 'http://127.0.0.1:8080', '127.0.0.1');
      socket.on('close', () => session.onClose());
      return {
        socket,
        session,
        text: (message) =>
          session.onMessage(Buffer.from(typeof message === 'string' ? message : JSON.stringify(message)), false),
      };
    },
    close: () => hub.close(),
  };
}
