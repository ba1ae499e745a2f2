import { accessToken, signedOut } from './access.js';
import {
  CloseCode,
  LIVE_PATH,
  SUBPROTOCOL,
  type ClientMessage,
  type ServerMessage,
} from '../../../src/shared/protocol.js';
import { decodeServerMessage } from '../../../src/shared/request-frame.js';
import { createFields } from '../endpoint/endpoint.js';
import type { Session, Transport, TransportEvents } from './transport.js';

/** The code a browser reports for a socket that closed without a close frame (a refused or blocked upgrade, a dropped network); no server sends it. */
const ABNORMAL_CLOSURE = 1006;
/** Close codes from here up are an application's own: from the server, never from the browser. */
const APPLICATION_CODES = 4000;

export interface SocketEvents extends TransportEvents {
  /**
   * The socket closed unasked. `reached`: it got through to the server (a welcome, or a close
   * code the server chose); otherwise sockets may not get through at all.
   */
  closed(code: number, reached: boolean): void;
}

/** One WebSocket: joins the session's endpoint (resuming after `lastSeq`) or creates one. It does not reconnect. */
export class SocketTransport implements Transport {
  private readonly socket: WebSocket;
  private closed = false;

  constructor(session: Readonly<Session>, events: SocketEvents) {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}${LIVE_PATH}`, SUBPROTOCOL);
    // v2 sends each captured request as one binary frame (shared/request-frame.ts).
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    let opened = false;
    let welcomed = false;

    socket.onopen = () => {
      opened = true;
      const { credentials } = session;
      // The access token rides in the first message, never in the socket's URL; no key: the signed-in creator opening its own endpoint.
      const token = accessToken();
      const signed = token === undefined ? {} : { token };
      socket.send(
        JSON.stringify(
          credentials
            ? {
                type: 'join',
                endpointId: credentials.endpointId,
                ...(credentials.key ? { key: credentials.key } : {}),
                afterSeq: session.lastSeq,
                ...signed,
              }
            : { type: 'create', kind: session.kind, ...createFields(session.kind, session.keptOptions), ...signed },
        ),
      );
    };
    socket.onmessage = (event) => {
      if (this.closed) return;
      let message: ServerMessage;
      try {
        message = decodeServerMessage(event.data as string | ArrayBuffer);
      } catch {
        return; // A frame this page cannot read (a kind from a later release): skipped.
      }
      if (message.type === 'welcome') {
        welcomed = true;
        return events.welcome(message);
      }
      if (message.type === 'expired' || (message.type === 'error' && message.error.code === 'ENDPOINT_NOT_FOUND'))
        events.expired();
      events.message(message);
    };
    socket.onclose = (event) => {
      if (this.closed) return;
      this.closed = true;
      // The token was refused or withdrawn: retrying would be refused again.
      if (event.code === CloseCode.UNAUTHORIZED) return signedOut(true);
      if (event.code === CloseCode.ENDPOINT_NOT_FOUND || event.code === CloseCode.PROTOCOL_ERROR)
        return events.expired();
      // A browser reports a refused or blocked upgrade as 1006 before `open`; a close code from a
      // server, even before `open`, means it answered.
      events.closed(
        event.code,
        welcomed || (opened ? event.code !== ABNORMAL_CLOSURE : event.code >= APPLICATION_CODES),
      );
    };
  }

  send(message: ClientMessage): boolean {
    if (this.closed || this.socket.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  close(): void {
    this.closed = true;
    if (this.socket.readyState <= WebSocket.OPEN) this.socket.close(1000, 'page left this endpoint');
  }
}
