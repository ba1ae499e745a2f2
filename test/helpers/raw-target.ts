import { createServer, type Server, type Socket } from 'node:net';

/** One request exactly as its bytes arrived at the target. */
export interface ReceivedRequest {
  method: string;
  /** The request target: path and query as sent. */
  target: string;
  /** `[name, value]` pairs in arrival order, case as sent, duplicates kept. */
  headers: Array<[string, string]>;
  /** The body after framing is undone (Content-Length, or chunked if a sender used it). */
  body: Buffer;
  /** Every byte of the request: request line, head and body as framed. */
  raw: Buffer;
}

/**
 * A raw TCP "HTTP server" that records every byte it receives and answers `200 OK` with a
 * Content-Length, keeping the connection unless asked to close. No node:http on this side, so
 * what the CLI sent is seen as sent, not as node's parser would normalise it.
 */
export class RawTarget {
  readonly requests: ReceivedRequest[] = [];
  private readonly sockets = new Set<Socket>();
  private waiters: Array<() => void> = [];
  /** Runs before each answer: a test can hold the answer back. */
  beforeAnswer: (request: ReceivedRequest) => Promise<void> = async () => {};

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(port = 0): Promise<RawTarget> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const target = new RawTarget(server, address.port);
    server.on('connection', (socket) => target.serve(socket));
    return target;
  }

  url(path = '/'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Waits until at least `count` requests have arrived. */
  async waitForRequests(count: number, timeoutMs = 10_000): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`target got ${this.requests.length} of ${count} requests within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.requests.slice(0, count);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffer = Buffer.alloc(0);
    let busy = false;
    const pump = async () => {
      if (busy) return;
      busy = true;
      for (;;) {
        const parsed = parseRequest(buffer);
        if (!parsed) break;
        buffer = buffer.subarray(parsed.length);
        this.requests.push(parsed.request);
        this.wake();
        await this.beforeAnswer(parsed.request);
        const close = parsed.request.headers.some(
          ([name, value]) => name.toLowerCase() === 'connection' && /\bclose\b/i.test(value),
        );
        if (socket.destroyed) break;
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 2\r\n${close ? 'Connection: close\r\n' : ''}\r\nok`);
        if (close) {
          socket.end();
          break;
        }
      }
      busy = false;
    };
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      void pump();
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/** Parses one complete request at the start of `data`, or returns undefined when more is needed. */
function parseRequest(data: Buffer): { request: ReceivedRequest; length: number } | undefined {
  const headEnd = data.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const [requestLine = '', ...lines] = data.subarray(0, headEnd).toString('latin1').split('\r\n');
  const [method = '', target = ''] = requestLine.split(' ');
  const headers = lines.map((line): [string, string] => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon), line.slice(colon + 1).trim()];
  });
  const find = (name: string) => headers.find(([key]) => key.toLowerCase() === name)?.[1];
  let offset = headEnd + 4;
  let body: Buffer;
  if (find('transfer-encoding')?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = data.indexOf('\r\n', offset);
      if (lineEnd === -1) return undefined;
      const size = parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16);
      if (data.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
      offset = lineEnd + 2 + size + 2;
      if (size === 0) break;
    }
    body = Buffer.concat(parts);
  } else {
    const length = Number(find('content-length') ?? 0);
    if (data.length < offset + length) return undefined;
    body = data.subarray(offset, offset + length);
    offset += length;
  }
  return {
    request: { method, target, headers, body: Buffer.from(body), raw: Buffer.from(data.subarray(0, offset)) },
    length: offset,
  };
}
