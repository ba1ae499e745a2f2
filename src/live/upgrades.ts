import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errors, toErrorBody } from '../errors.js';
import { RECEIVER_HEADERS } from '../http/receiver-route.js';
import { LIVE_PATH } from './protocol.js';

/**
 * Lets WebSocket upgrades through to the live route only. Returns an emitter that sees the
 * server's `upgrade` events for `/api/live`; an upgrade to any other path is answered
 * 400 `UPGRADE_NOT_SUPPORTED` and its connection closed, so it never reaches a receiver
 * (where it would be neither captured nor answered) or the page.
 */
export function liveUpgrades(server: Server): EventEmitter {
  const live = new EventEmitter();
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = request.url ?? '';
    const queryStart = url.indexOf('?');
    if ((queryStart === -1 ? url : url.slice(0, queryStart)) === LIVE_PATH) {
      live.emit('upgrade', request, socket, head);
      return;
    }
    refuse(socket);
  });
  return live;
}

function refuse(socket: Duplex): void {
  const body = JSON.stringify(toErrorBody(errors.UPGRADE_NOT_SUPPORTED()));
  const headers = Object.entries(RECEIVER_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.on('error', () => socket.destroy());
  // Destroyed once the answer is flushed: an upgraded socket has no server timeouts, so a
  // client that never closes its side must not keep it open.
  socket.end(
    'HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n${headers}\r\n${body}`,
    () => socket.destroy(),
  );
}
