import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import proxyAddr from 'proxy-addr';
import { errors } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { addressKey, PerAddressCount } from '../request/address-key.js';
import { rawErrorAnswer } from './raw-errors.js';

export interface ConnectionLimits {
  maxConnections: number;
  maxConnectionsPerAddress: number;
  /** The server speaks TLS: a refused connection is closed without an answer (it would be plaintext). */
  tls: boolean;
  /** TRUST_PROXY: connections from a trusted proxy carry many clients, so they are not capped per address. */
  trustProxy: boolean | string[];
}

/**
 * Caps open TCP connections, in all (Node's `maxConnections`, which closes the excess at once)
 * and per client address, so one host cannot take every file descriptor. Returns the count of
 * open connections, for the metrics.
 */
export function limitConnections(server: Server, limits: ConnectionLimits, metrics: Metrics): () => number {
  server.maxConnections = limits.maxConnections;
  server.on('drop', () => metrics.reject('too_many_connections'));
  const perAddress = new PerAddressCount(limits.maxConnectionsPerAddress);
  const trusted =
    typeof limits.trustProxy === 'boolean' ? () => limits.trustProxy === true : proxyAddr.compile(limits.trustProxy);
  let open = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const key = trusted(address, 0) ? undefined : addressKey(address);
    if (key !== undefined && !perAddress.take(key)) {
      metrics.reject('too_many_connections');
      socket.on('error', () => socket.destroy());
      if (limits.tls) socket.destroy();
      else
        socket.end(rawErrorAnswer(errors.TOO_MANY_CONNECTIONS(limits.maxConnectionsPerAddress)), () =>
          socket.destroy(),
        );
      return;
    }
    open++;
    socket.once('close', () => {
      open--;
      if (key !== undefined) perAddress.give(key);
    });
  });
  return () => open;
}
