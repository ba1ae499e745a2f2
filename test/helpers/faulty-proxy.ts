import { connect, createServer, type Server, type Socket } from 'node:net';
import type { RedisAddress } from './redis-setups.js';

/** Commands and replies the proxy has paired so far, over every connection it has carried. */
export interface ProxyCounts {
  /** Commands parsed on tracked connections (not those after a SUBSCRIBE, see below). */
  commands: number;
  /** Replies paired with a command, swallowed ones included; RESP3 pushes are not replies. */
  replies: number;
  /** RESP3 push frames (`>`) seen on tracked connections and forwarded as they came. */
  pushes: number;
}

/**
 * A TCP proxy in front of one Redis that can drop a reply, cut connections and stall traffic.
 *
 * It parses RESP in both directions to pair each command with its reply: clients may pipeline,
 * replies come back in order, and RESP3 push frames (`>`) are forwarded without being counted as
 * replies. A connection that sends SUBSCRIBE, SSUBSCRIBE, PSUBSCRIBE or MONITOR stops being
 * parsed once the replies before it are through: from then on its bytes pass through untouched.
 */
export interface FaultyProxy {
  port: number;
  /** `redis://127.0.0.1:<port>` */
  url: string;
  /**
   * Arms a one-shot fault: the next command, on any connection, for which `match(args)` is true
   * is passed to Redis, its reply is swallowed, and that client connection is destroyed on both
   * sides before any later reply on it is forwarded. `args[0]` is the command name upper-cased
   * (ioredis sends names in lower case); the rest are the arguments as UTF-8 strings. Resolves
   * once both sockets are closed. Rejects if the connection ends (or turns into a pass-through
   * subscriber connection) before the reply arrives, if the proxy closes first, or if another
   * dropReplyTo() replaces it before a command matched; a rejection nobody awaits is not reported
   * as unhandled.
   */
  dropReplyTo(match: (command: string[]) => boolean): Promise<void>;
  /**
   * Arms a one-shot pause: the reply to the next command for which `match(args)` is true is
   * forwarded, and then the proxy pauses (as `pause()`), before anything after it passes, on
   * any connection. Resolves once it has paused. Replaces an armed dropReplyTo, and the reverse.
   */
  pauseAfterReplyTo(match: (command: string[]) => boolean): Promise<void>;
  /** Destroys every proxied connection (both sides) now. New connections are still accepted. */
  killAll(): void;
  /**
   * Stops forwarding in both directions: bytes that arrive are buffered, unparsed, until
   * `resume()`. New connections are still accepted and connected upstream (their bytes wait).
   */
  pause(): void;
  /** Forwards (and parses) everything buffered during the pause, in arrival order, then carries on. */
  resume(): void;
  /** Open client connections. */
  connections(): number;
  /** Chunks held back by the pause, over every connection, in both directions. */
  held(): number;
  counts(): ProxyCounts;
  /** Starts counting the commands, on any connection, for which `match(args)` is true: the returned function reads the count. */
  countCommands(match: (command: string[]) => boolean): () => number;
  /** Destroys every connection and stops listening. */
  close(): Promise<void>;
}

/** A parsed RESP frame: its type byte, where it ends, and (for commands) its parts. */
interface Frame {
  type: string;
  end: number;
  /** Bulk and simple strings as text; aggregates as their elements; null for RESP nulls. */
  value: string | Frame[] | null;
}

const CRLF = Buffer.from('\r\n');
const LINE_TYPES = new Set(['+', '-', ':', '_', ',', '#', '(']);
const BLOB_TYPES = new Set(['$', '!', '=']);
const AGGREGATE_TYPES = new Set(['*', '~', '>']);
const PAIR_TYPES = new Set(['%', '|']);
/** After these, a connection's replies no longer pair one to one with its commands. */
const UNPAIRED_COMMANDS = new Set(['SUBSCRIBE', 'SSUBSCRIBE', 'PSUBSCRIBE', 'MONITOR']);

class ProtocolError extends Error {}

/**
 * Reads one RESP2/RESP3 frame at `start`; `undefined` when the buffer ends inside it. An
 * attribute (`|`) is returned together with the frame it annotates, as RESP3 says it belongs to
 * it. Streamed strings and aggregates (`$?`, `*?`) are not parsed: Redis never sends them.
 */
function readFrame(buffer: Buffer, start: number): Frame | undefined {
  if (start >= buffer.length) return undefined;
  const lineEnd = buffer.indexOf(CRLF, start);
  if (lineEnd === -1) return undefined;
  const type = String.fromCharCode(buffer[start] ?? 0);
  const line = buffer.toString('utf8', start + 1, lineEnd);
  const afterLine = lineEnd + 2;
  if (LINE_TYPES.has(type)) return { type, end: afterLine, value: line };
  const length = Number(line);
  if (!Number.isInteger(length)) throw new ProtocolError(`unparsable RESP length ${JSON.stringify(line)}`);
  if (BLOB_TYPES.has(type)) {
    if (length < 0) return { type, end: afterLine, value: null };
    const end = afterLine + length + 2;
    if (end > buffer.length) return undefined;
    return { type, end, value: buffer.toString('utf8', afterLine, afterLine + length) };
  }
  if (AGGREGATE_TYPES.has(type) || PAIR_TYPES.has(type)) {
    if (length < 0) return { type, end: afterLine, value: null };
    const elements: Frame[] = [];
    let offset = afterLine;
    for (let i = 0; i < (PAIR_TYPES.has(type) ? length * 2 : length); i += 1) {
      const element = readFrame(buffer, offset);
      if (element === undefined) return undefined;
      elements.push(element);
      offset = element.end;
    }
    if (type !== '|') return { type, end: offset, value: elements };
    return readFrame(buffer, offset);
  }
  throw new ProtocolError(`unknown RESP type byte ${JSON.stringify(type)}`);
}

/** Reads one command as a client sends it: an array of bulk strings, or an inline command line. */
function readCommand(buffer: Buffer, start: number): { args: string[]; end: number } | undefined {
  if (buffer[start] !== 0x2a /* '*' */) {
    const lineEnd = buffer.indexOf('\n', start);
    if (lineEnd === -1) return undefined;
    const args = buffer.toString('utf8', start, lineEnd).trim().split(/\s+/).filter(Boolean);
    return { args, end: lineEnd + 1 };
  }
  const frame = readFrame(buffer, start);
  if (frame === undefined) return undefined;
  if (!Array.isArray(frame.value)) return { args: [], end: frame.end };
  const args = frame.value.map((part) => (typeof part.value === 'string' ? part.value : ''));
  return { args, end: frame.end };
}

/**
 * - `tracking`: both directions parsed, commands paired with replies.
 * - `subscribing`: a SUBSCRIBE (or MONITOR) was sent; client bytes pass through, replies are
 *   still paired until the one for that command, after which the connection is `passthrough`.
 * - `passthrough`: bytes forwarded untouched both ways (also after a protocol error).
 * - `dropping`: a reply was swallowed; both sockets are being destroyed, nothing is forwarded.
 * - `closed`: both sockets are gone.
 */
type ConnectionState = 'tracking' | 'subscribing' | 'passthrough' | 'dropping' | 'closed';

interface PendingCommand {
  name: string;
  /** Set when this command's reply is the one to swallow. */
  drop: Drop | undefined;
}

interface Drop {
  match: (command: string[]) => boolean;
  resolve: () => void;
  reject: (error: Error) => void;
  /** Forward the reply, then pause the proxy (pauseAfterReplyTo), instead of swallowing it. */
  pauseAfter?: boolean;
}

type Direction = 'toServer' | 'toClient';

class ProxiedConnection {
  state: ConnectionState = 'tracking';
  private readonly pending: PendingCommand[] = [];
  private fromClient: Buffer = Buffer.alloc(0);
  private fromServer: Buffer = Buffer.alloc(0);
  /** Chunks that arrived while the proxy was paused, in arrival order across both directions. */
  private held: Array<{ direction: Direction; chunk: Buffer }> = [];
  readonly closed: Promise<void>;

  constructor(
    private readonly client: Socket,
    private readonly server: Socket,
    private readonly proxy: ProxyState,
  ) {
    const clientClosed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    const serverClosed = new Promise<void>((resolve) => server.once('close', () => resolve()));
    this.closed = Promise.all([clientClosed, serverClosed]).then(() => undefined);
    // Either side going away takes the other with it, as a dropped network path would.
    // While dropping, the client side is ended gracefully by fireDrop() instead.
    for (const socket of [client, server]) {
      socket.on('error', () => this.state !== 'dropping' && this.destroy());
      socket.on('close', () => this.state !== 'dropping' && this.destroy());
    }
    client.on('data', (chunk: Buffer) => this.receive('toServer', chunk));
    server.on('data', (chunk: Buffer) => this.receive('toClient', chunk));
  }

  private setState(next: ConnectionState): void {
    if (this.state === 'closed') return;
    this.state = next;
  }

  private receive(direction: Direction, chunk: Buffer): void {
    if (this.state === 'closed' || this.state === 'dropping') return;
    if (this.proxy.paused) this.held.push({ direction, chunk });
    else this.process(direction, chunk);
  }

  /** Chunks the pause holds back now. */
  get heldChunks(): number {
    return this.held.length;
  }

  /** Processes what the pause held back, in the order it arrived. */
  release(): void {
    const held = this.held;
    this.held = [];
    for (const { direction, chunk } of held) {
      if (this.state === 'closed' || this.state === 'dropping') return;
      this.process(direction, chunk);
    }
  }

  private process(direction: Direction, chunk: Buffer): void {
    try {
      if (direction === 'toServer') this.processFromClient(chunk);
      else this.processFromServer(chunk);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      // Unparsable bytes: stop interpreting this connection rather than corrupting it.
      this.passThroughBuffered();
    }
  }

  private processFromClient(chunk: Buffer): void {
    if (this.state !== 'tracking') {
      this.server.write(chunk);
      return;
    }
    // Bytes are forwarded as they come; parsing only follows along to queue what is pending.
    this.server.write(chunk);
    this.fromClient = this.fromClient.length === 0 ? chunk : Buffer.concat([this.fromClient, chunk]);
    let offset = 0;
    for (;;) {
      const command = readCommand(this.fromClient, offset);
      if (command === undefined) break;
      offset = command.end;
      if (command.args.length === 0) continue;
      const args = [(command.args[0] ?? '').toUpperCase(), ...command.args.slice(1)];
      this.proxy.counts.commands += 1;
      this.proxy.observe(args);
      this.pending.push({ name: args[0] ?? '', drop: this.proxy.takeDrop(args) });
      if (UNPAIRED_COMMANDS.has(args[0] ?? '')) {
        // The rest of this chunk is already on its way to Redis; nothing after it is parsed.
        this.fromClient = Buffer.alloc(0);
        this.setState('subscribing');
        this.passThroughWhenPaired(this.fromServer);
        return;
      }
    }
    this.fromClient = this.fromClient.subarray(offset);
  }

  private processFromServer(chunk: Buffer): void {
    if (this.state === 'passthrough') {
      this.client.write(chunk);
      return;
    }
    this.fromServer = this.fromServer.length === 0 ? chunk : Buffer.concat([this.fromServer, chunk]);
    let offset = 0;
    // Replies are forwarded whole, one frame at a time, so one of them can be held back.
    for (;;) {
      const frame = readFrame(this.fromServer, offset);
      if (frame === undefined) break;
      const bytes = this.fromServer.subarray(offset, frame.end);
      offset = frame.end;
      if (frame.type === '>') {
        this.proxy.counts.pushes += 1;
        this.client.write(bytes);
        continue;
      }
      const command = this.pending.shift();
      this.proxy.counts.replies += 1;
      if (command?.drop?.pauseAfter) {
        this.client.write(bytes);
        this.proxy.paused = true;
        command.drop.resolve();
        // What came after it waits for resume() like anything arriving from now on.
        const rest = this.fromServer.subarray(offset);
        this.fromServer = Buffer.alloc(0);
        if (rest.length > 0) this.held.push({ direction: 'toClient', chunk: rest });
        return;
      }
      if (command?.drop !== undefined) {
        this.fireDrop(command.drop);
        return;
      }
      this.client.write(bytes);
      if (this.passThroughWhenPaired(this.fromServer.subarray(offset))) return;
    }
    this.fromServer = this.fromServer.subarray(offset);
  }

  /**
   * Once every reply before a SUBSCRIBE (or MONITOR) is through, what follows cannot be paired
   * (RESP2 answers SUBSCRIBE once per channel, RESP3 with pushes): forward `rest` and stop parsing.
   */
  private passThroughWhenPaired(rest: Buffer): boolean {
    if (this.state !== 'subscribing' || !UNPAIRED_COMMANDS.has(this.pending[0]?.name ?? '')) return false;
    if (rest.length > 0) this.client.write(rest);
    this.fromServer = Buffer.alloc(0);
    this.setState('passthrough');
    this.abandonPending('the connection stopped being parsed (SUBSCRIBE or MONITOR) before the reply to drop');
    return true;
  }

  private passThroughBuffered(): void {
    if (this.fromServer.length > 0) this.client.write(this.fromServer);
    this.fromClient = Buffer.alloc(0);
    this.fromServer = Buffer.alloc(0);
    this.setState('passthrough');
    this.abandonPending('the connection stopped being parsed (a protocol error) before the reply to drop');
  }

  /** Forgets the commands still waiting for replies, failing any drop among them. */
  private abandonPending(reason: string): void {
    for (const command of this.pending.splice(0)) command.drop?.reject(new Error(reason));
  }

  /** Swallows the reply: nothing more reaches the client, and both sockets go. */
  private fireDrop(drop: Drop): void {
    this.setState('dropping');
    this.abandonPending('an earlier reply on the connection was dropped');
    this.fromServer = Buffer.alloc(0);
    // end() rather than destroy(), so replies forwarded before the swallowed one still reach
    // the client; destroy() below leaves the client side alone while dropping.
    this.client.end(() => this.client.destroy());
    this.server.destroy();
    void this.closed.then(() => {
      this.setState('closed');
      drop.resolve();
    });
  }

  /** Destroys both sockets now, whatever the state. */
  destroy(): void {
    if (this.state === 'closed') return;
    this.setState('closed');
    this.held = [];
    this.client.destroy();
    this.server.destroy();
    this.abandonPending('the connection closed before the reply to drop arrived');
  }
}

interface ProxyState {
  paused: boolean;
  counts: ProxyCounts;
  /** Hands the armed drop to a command that matches it, disarming it. */
  takeDrop(args: string[]): Drop | undefined;
  /** Each parsed command's arguments, for the counters. */
  observe(args: string[]): void;
}

/** Starts a {@link FaultyProxy} on a free 127.0.0.1 port in front of `target`. */
export async function startFaultyProxy(target: RedisAddress): Promise<FaultyProxy> {
  const live = new Set<ProxiedConnection>();
  let armed: Drop | undefined;
  const counters: Array<{ match: (command: string[]) => boolean; count: number }> = [];
  const state: ProxyState = {
    paused: false,
    counts: { commands: 0, replies: 0, pushes: 0 },
    takeDrop(args) {
      if (armed === undefined || !armed.match(args)) return undefined;
      const drop = armed;
      armed = undefined;
      return drop;
    },
    observe(args) {
      for (const counter of counters) if (counter.match(args)) counter.count += 1;
    },
  };

  const server: Server = createServer((client) => {
    const upstream = connect({ host: target.host, port: target.port });
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const connection = new ProxiedConnection(client, upstream, state);
    live.add(connection);
    void connection.closed.then(() => live.delete(connection));
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
  const port = address.port;

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dropReplyTo(match) {
      armed?.reject(new Error('replaced by a later dropReplyTo'));
      const dropped = new Promise<void>((resolve, reject) => {
        armed = { match, resolve, reject };
      });
      dropped.catch(() => undefined);
      return dropped;
    },
    pauseAfterReplyTo(match) {
      armed?.reject(new Error('replaced by a later pauseAfterReplyTo'));
      const paused = new Promise<void>((resolve, reject) => {
        armed = { match, resolve, reject, pauseAfter: true };
      });
      paused.catch(() => undefined);
      return paused;
    },
    killAll() {
      for (const connection of live) connection.destroy();
    },
    pause() {
      state.paused = true;
    },
    resume() {
      state.paused = false;
      for (const connection of live) connection.release();
    },
    connections: () => [...live].filter((connection) => connection.state !== 'closed').length,
    held: () => [...live].reduce((sum, connection) => sum + connection.heldChunks, 0),
    counts: () => ({ ...state.counts }),
    countCommands(match) {
      const counter = { match, count: 0 };
      counters.push(counter);
      return () => counter.count;
    },
    async close() {
      armed?.reject(new Error('the proxy closed'));
      armed = undefined;
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      const connections = [...live];
      for (const connection of connections) connection.destroy();
      await Promise.all([closing, ...connections.map((connection) => connection.closed)]);
    },
  };
}
