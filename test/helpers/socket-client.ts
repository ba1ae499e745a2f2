import WebSocket from 'ws';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import {
  LIVE_PATH,
  SUBPROTOCOL,
  type ClientMessage,
  type ServerMessage,
  type WelcomeMessage,
} from '../../src/shared/protocol.js';
import { decodeServerMessage } from '../../src/shared/request-frame.js';

type Of<T extends ServerMessage['type']> = Extract<ServerMessage, { type: T }>;

/** A real `ws` client speaking the live protocol, with a queue to await messages from. */
export class SocketClient {
  readonly messages: ServerMessage[] = [];
  private waiters: Array<() => void> = [];
  closeCode: number | undefined;
  closed: Promise<number>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data, isBinary) => {
      this.messages.push(decodeServerMessage(isBinary ? (data as Buffer) : data.toString()));
      this.wake();
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', (code) => {
        this.closeCode = code;
        this.wake();
        resolve(code);
      }),
    );
  }

  static async open(wsUrl: string, protocol: string | undefined = SUBPROTOCOL): Promise<SocketClient> {
    const socket = new WebSocket(`${wsUrl}${LIVE_PATH}`, protocol === undefined ? [] : [protocol]);
    const client = new SocketClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return client;
  }

  /** Opens a socket and creates a new endpoint. */
  static async create(wsUrl: string): Promise<{ client: SocketClient; welcome: WelcomeMessage }> {
    const client = await SocketClient.open(wsUrl);
    client.send({ type: 'create' });
    return { client, welcome: await client.next('welcome') };
  }

  static async join(
    wsUrl: string,
    endpointId: string,
    key: string,
    afterSeq?: number,
  ): Promise<{ client: SocketClient; welcome: WelcomeMessage }> {
    const client = await SocketClient.open(wsUrl);
    client.send({ type: 'join', endpointId, key, ...(afterSeq === undefined ? {} : { afterSeq }) });
    return { client, welcome: await client.next('welcome') };
  }

  // `object`, not `ClientMessage | Record<string, unknown>`: past ten members TypeScript matches an
  // object literal to a union by its `type` alone, and a test's deliberately partial or wrong
  // message must still be sendable.
  send(message: ClientMessage | object): void {
    this.socket.send(JSON.stringify(message));
  }

  /** Removes and returns the first queued message of this type, waiting up to `timeoutMs`. */
  async next<T extends ServerMessage['type']>(type: T, timeoutMs = 3000): Promise<Of<T>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.messages.findIndex((message) => message.type === type);
      if (index !== -1) return this.messages.splice(index, 1)[0] as Of<T>;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `no '${type}' message within ${timeoutMs} ms; got ${JSON.stringify(this.messages.map((m) => m.type))}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for `count` request messages and returns their requests. */
  async requests(count: number, timeoutMs = 3000): Promise<CapturedRequest[]> {
    const result: CapturedRequest[] = [];
    for (let i = 0; i < count; i++) result.push((await this.next('request', timeoutMs)).request);
    return result;
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    this.socket.close();
    await this.closed;
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
