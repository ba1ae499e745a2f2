import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errors } from '../errors.js';
import { refuseHandedOver } from '../http/raw-errors.js';
import { LIVE_PATH } from '../shared/protocol.js';

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
    refuseHandedOver(socket, errors.UPGRADE_NOT_SUPPORTED());
  });
  return live;
}
