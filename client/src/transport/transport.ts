// What the page's two ways of reaching its endpoint have in common: a WebSocket (socket-transport.ts)
// and, where sockets do not get through, polling the HTTP API (polling-transport.ts).
// connection.ts chooses between them.
import type { ClientMessage, ServerMessage, WelcomeMessage } from '../../../src/shared/protocol.js';
import type { Credentials, EndpointKind, KeptOptions } from '../endpoint/endpoint.js';

/** Where the page stands with its endpoint; kept by the connection, read by whichever transport is in use. */
export interface Session {
  /** The endpoint to join; none: create one of `kind`. Set from the first welcome. */
  credentials: Credentials | undefined;
  kind: EndpointKind;
  /** A kept one to create: its lifetime, name and redaction. */
  keptOptions?: KeptOptions;
  /** The highest request seq received: a resume or a poll asks for what came after it. */
  lastSeq: number;
  /** The seq the log was cleared up to, as last heard. */
  clearedSeq: number;
  /** A welcome arrived since the page started on this endpoint: any later one is a resume. */
  welcomed: boolean;
}

/** What a transport reports. Both bring the same messages, so the page need not know which is in use. */
export interface TransportEvents {
  /** Through to the endpoint. Over HTTP, a welcome made up from the first answer. */
  welcome(message: WelcomeMessage): void;
  message(message: ServerMessage): void;
  /** The endpoint is gone (expired, deleted, or the key is wrong), or the server refuses this page's protocol. */
  expired(): void;
}

/** One way of reaching the endpoint. */
export interface Transport {
  /** Sends the message, or makes the same change; false when this transport cannot now. */
  send(message: ClientMessage): boolean;
  /** Stops it: it reports nothing more. */
  close(): void;
}
