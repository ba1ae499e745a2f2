import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LiveConnection, POLL_MS, type ConnectionState } from '../../client/src/transport/connection.js';
import { CloseCode, type EndpointInfo, type ServerMessage, type WelcomeMessage } from '../../src/shared/protocol.js';
import type { PollAnswer } from '../../src/shared/schemas/endpoints-api.js';
import { capturedRequest } from '../helpers/captured.js';
import { requestFrame } from '../../src/socket/frame.js';
import { encodeRecord } from '../../src/store/stored-request.js';

/** A browser WebSocket, driven by the test: open(), receive(), drop(). */
class FakeSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  static made: FakeSocket[] = [];
  readyState = FakeSocket.CONNECTING;
  sent: Array<Record<string, unknown>> = [];
  closedBy: number | undefined;
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;

  constructor(
    readonly url: string,
    readonly protocol: string,
  ) {
    FakeSocket.made.push(this);
  }

  send(data: string): void {
    this.sent.push(JSON.parse(data) as Record<string, unknown>);
  }

  close(code = 1000): void {
    this.closedBy = code;
    this.readyState = FakeSocket.CLOSED;
  }

  open(): void {
    this.readyState = FakeSocket.OPEN;
    this.onopen?.();
  }

  receive(message: ServerMessage): void {
    this.onmessage?.({ data: JSON.stringify(message) });
  }

  /** A binary frame, as a browser with binaryType 'arraybuffer' hands it over. */
  receiveBinary(bytes: Uint8Array): void {
    const data = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    (this.onmessage as unknown as (event: { data: ArrayBuffer }) => void)({ data: data as ArrayBuffer });
  }

  drop(code: number): void {
    this.readyState = FakeSocket.CLOSED;
    this.onclose?.({ code, reason: '' });
  }
}

const endpoint: EndpointInfo = {
  id: 'abc',
  key: 'k3y',
  url: 'http://localhost/api/webhook-tester/abc',
  kind: 'live',
  createdAt: '2026-01-01T00:00:00.000Z',
  response: { status: 200, body: '', contentType: 'application/json', headers: [], delayMs: 0 },
  graceSeconds: 30,
  maxRequests: 50,
  maxBodyBytes: 1024,
};
const welcome = (overrides: Partial<WelcomeMessage> = {}): WelcomeMessage => ({
  type: 'welcome',
  endpoint,
  created: true,
  backlog: 0,
  clearedSeq: 0,
  lastSeq: 0,
  gap: false,
  ...overrides,
});
const pollAnswer = (seqs: number[], more: Partial<{ clearedSeq: number; gap: boolean }> = {}): PollAnswer => ({
  lastSeq: Math.max(0, ...seqs, more.clearedSeq ?? 0),
  clearedSeq: 0,
  gap: false,
  more: false,
  expiresAt: null,
  forwarded: [],
  requests: seqs.map((seq) => capturedRequest({ seq })),
  ...more,
});

let fetched: Array<{ method: string; path: string; authorization: string | undefined }>;
/** What the HTTP API answers next, by method: a status and a body, or undefined for no answer at all. */
let answers: Record<string, { status: number; body?: unknown } | undefined>;

function connect() {
  const states: ConnectionState[] = [];
  const welcomes: Array<{ message: WelcomeMessage; resumed: boolean }> = [];
  const messages: ServerMessage[] = [];
  const gaps: number[] = [];
  const connection = new LiveConnection({
    state: (state) => states.push(state),
    welcome: (message, resumed) => welcomes.push({ message, resumed }),
    message: (message) => messages.push(message),
    gap: () => gaps.push(Date.now()),
  });
  return {
    connection,
    states,
    welcomes,
    messages,
    gaps,
    socket: (index = -1) => FakeSocket.made.at(index) as FakeSocket,
  };
}

/** Two sockets that never get through (refused before open): the page turns to HTTP. */
async function refuseSockets(): Promise<void> {
  FakeSocket.made.at(-1)?.drop(1006);
  await vi.advanceTimersByTimeAsync(1000);
  FakeSocket.made.at(-1)?.drop(1006);
  await vi.advanceTimersByTimeAsync(0);
}

beforeEach(() => {
  vi.useFakeTimers();
  FakeSocket.made = [];
  fetched = [];
  answers = {};
  vi.stubGlobal('window', globalThis);
  vi.stubGlobal('location', { protocol: 'http:', host: 'localhost', origin: 'http://localhost' });
  vi.stubGlobal('WebSocket', FakeSocket);
  vi.stubGlobal('fetch', async (path: string, init: { method: string; headers: Record<string, string> }) => {
    fetched.push({ method: init.method, path, authorization: init.headers.authorization });
    const answer = answers[init.method];
    if (!answer) throw new TypeError('network down');
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), { status: answer.status });
  });
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('the page: its connection', () => {
  it('creates over a socket, goes live, and resumes after a drop from the newest seq it got', async () => {
    const { connection, states, welcomes, messages, socket } = connect();
    connection.start(undefined, 'kept');
    expect(states).toEqual(['connecting']);
    expect(socket().protocol).toBe('hookwatch.v2');
    socket().open();
    expect(socket().sent).toEqual([{ type: 'create', kind: 'kept' }]);
    socket().receive(welcome());
    expect(states.at(-1)).toBe('live');
    expect(welcomes).toEqual([{ message: welcome(), resumed: false }]);
    socket().receive({ type: 'request', request: capturedRequest({ seq: 7 }) });
    expect(messages.map((message) => message.type)).toEqual(['request']);

    socket().drop(1006);
    expect(states.at(-1)).toBe('reconnecting');
    expect(connection.nextAttemptAt).toBeGreaterThan(Date.now());
    await vi.advanceTimersByTimeAsync(1000);
    expect(FakeSocket.made).toHaveLength(2);
    socket().open();
    expect(socket().sent).toEqual([{ type: 'join', endpointId: 'abc', key: 'k3y', afterSeq: 7 }]);
    socket().receive(welcome({ created: false }));
    expect(welcomes.at(-1)?.resumed).toBe(true);
    expect(connection.nextAttemptAt).toBeUndefined();
    expect(connection.send({ type: 'clear' })).toBe(true);
    expect(socket().sent.at(-1)).toEqual({ type: 'clear' });
  });

  it('reads a v2 request frame, and skips a binary frame it cannot read without losing the socket', () => {
    const { connection, messages, socket } = connect();
    connection.start(undefined, 'live');
    socket().open();
    socket().receive(welcome());
    const frame = requestFrame(
      3,
      '{"status":200,"delayMs":0,"by":"default"}',
      encodeRecord('{"method":"PUT"}', Buffer.from([0, 255])),
    );
    const payload = Buffer.concat(frame.chunks).subarray(2);
    socket().receiveBinary(payload);
    const unknown = Buffer.from(payload);
    unknown[0] = 9;
    socket().receiveBinary(unknown);
    socket().receiveBinary(payload.subarray(0, 20));
    socket().receive({ type: 'cleared', clearedSeq: 3 });
    expect(messages.map((message) => message.type)).toEqual(['request', 'cleared']);
    const [received] = messages as Array<{ request: { seq: number; method: string; body: string } }>;
    expect([received?.request.seq, received?.request.method, received?.request.body]).toEqual([3, 'PUT', 'AP8=']);
    expect(socket().closedBy).toBeUndefined();
  });

  it('Retry now skips the backoff wait', async () => {
    const { connection, socket } = connect();
    connection.start(undefined);
    socket().open();
    socket().receive(welcome());
    socket().drop(1006);
    connection.retryNow();
    expect(FakeSocket.made).toHaveLength(2);
    expect(connection.nextAttemptAt).toBeUndefined();
    // Nothing more when the wait is over.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(FakeSocket.made).toHaveLength(2);
  });

  it('waits at least 10 s when the server is at capacity', () => {
    const { connection, socket } = connect();
    connection.start(undefined);
    socket().open();
    socket().drop(CloseCode.AT_CAPACITY);
    expect(connection.nextAttemptAt).toBeGreaterThanOrEqual(Date.now() + 10_000);
  });

  it('stops at a gone endpoint (close 4004, an expired message) and at a refused protocol', async () => {
    const first = connect();
    first.connection.start({ endpointId: 'abc', key: 'k3y' });
    first.socket().open();
    first.socket().drop(CloseCode.ENDPOINT_NOT_FOUND);
    expect(first.states.at(-1)).toBe('expired');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(FakeSocket.made).toHaveLength(1);

    // The server refuses this page's protocol: nothing to retry either.
    const refused = connect();
    refused.connection.start(undefined);
    refused.socket().drop(CloseCode.PROTOCOL_ERROR);
    expect(refused.states.at(-1)).toBe('expired');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(FakeSocket.made).toHaveLength(2);

    const second = connect();
    second.connection.start({ endpointId: 'abc', key: 'k3y' });
    second.socket().open();
    second.socket().receive(welcome());
    second.socket().receive({ type: 'expired', reason: 'deleted' });
    expect(second.states.at(-1)).toBe('expired');
    expect(second.socket().closedBy).toBe(1000);
    expect(second.connection.send({ type: 'clear' })).toBe(false);
  });

  it('a server that answered (a close code of its own) does not count as sockets failing', async () => {
    const { connection, socket } = connect();
    connection.start(undefined);
    for (let i = 0; i < 3; i++) {
      socket().drop(CloseCode.TOO_MANY_MESSAGES);
      await vi.advanceTimersByTimeAsync(20_000);
    }
    expect(fetched).toEqual([]);
  });

  it('turns to the HTTP API when two sockets in a row cannot connect, polls it, makes changes over it, and goes live when a socket gets through', async () => {
    const { connection, states, welcomes, messages, gaps, socket } = connect();
    connection.start(undefined);
    answers.POST = { status: 201, body: endpoint };
    await refuseSockets();
    expect(fetched).toEqual([{ method: 'POST', path: '/api/endpoints', authorization: undefined }]);
    expect(states.at(-1)).toBe('polling');
    expect(welcomes).toEqual([{ message: welcome(), resumed: false }]);

    answers.GET = { status: 200, body: pollAnswer([1, 2]) };
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(fetched.at(-1)).toEqual({
      method: 'GET',
      path: '/api/endpoints/abc/requests?afterSeq=0',
      authorization: 'Bearer k3y',
    });
    expect(messages.map((message) => message.type === 'request' && message.request.seq)).toEqual([1, 2]);
    answers.GET = { status: 200, body: pollAnswer([], { clearedSeq: 2, gap: true }) };
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(fetched.at(-1)?.path).toBe('/api/endpoints/abc/requests?afterSeq=2');
    expect(messages.at(-1)).toEqual({ type: 'cleared', clearedSeq: 2 });
    expect(gaps).toHaveLength(1);

    answers.DELETE = { status: 200, body: { clearedSeq: 5 } };
    expect(connection.send({ type: 'clear' })).toBe(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(fetched.at(-1)).toEqual({
      method: 'DELETE',
      path: '/api/endpoints/abc/requests',
      authorization: 'Bearer k3y',
    });
    expect(messages.at(-1)).toEqual({ type: 'cleared', clearedSeq: 5 });

    // A socket is tried every 30 s, in the background.
    const sockets = FakeSocket.made.length;
    await vi.advanceTimersByTimeAsync(30_000 - 2 * POLL_MS);
    expect(FakeSocket.made).toHaveLength(sockets + 1);
    expect(states.at(-1)).toBe('polling');
    socket().open();
    expect(socket().sent).toEqual([{ type: 'join', endpointId: 'abc', key: 'k3y', afterSeq: 2 }]);
    socket().receive(welcome({ created: false }));
    expect(states.at(-1)).toBe('live');
    expect(welcomes.at(-1)?.resumed).toBe(true);
    const polls = fetched.length;
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(fetched).toHaveLength(polls);
  });

  it('while polling, says when the API stops answering and when the next poll is due, and recovers', async () => {
    const { connection, states } = connect();
    connection.start({ endpointId: 'abc', key: 'k3y' });
    answers.GET = { status: 200, body: pollAnswer([3]) };
    await refuseSockets();
    expect(states.at(-1)).toBe('polling');
    expect(connection.nextAttemptAt).toBeUndefined();

    answers.GET = undefined;
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(states.at(-1)).toBe('reconnecting');
    expect(connection.nextAttemptAt).toBe(Date.now() + POLL_MS);
    answers.GET = { status: 200, body: pollAnswer([]) };
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(states.at(-1)).toBe('polling');
    expect(connection.nextAttemptAt).toBeUndefined();
  });

  it('joins over HTTP with a partial endpoint when this browser never saw it, and expires on a 404', async () => {
    const { connection, states, welcomes, messages } = connect();
    connection.start({ endpointId: 'xyz', key: 'k3y' });
    answers.GET = { status: 200, body: pollAnswer([4, 5]) };
    await refuseSockets();
    const [first] = welcomes;
    expect(first?.message.backlog).toBe(2);
    expect(first?.message.endpoint).toMatchObject({
      id: 'xyz',
      kind: 'live',
      url: 'http://localhost/api/webhook-tester/xyz',
      partial: true,
      maxRequests: 50,
    });
    expect(messages).toHaveLength(2);

    answers.GET = { status: 404, body: { error: { code: 'ENDPOINT_NOT_FOUND', message: 'gone' } } };
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(states.at(-1)).toBe('expired');
    const polls = fetched.length;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(fetched).toHaveLength(polls);
    expect(FakeSocket.made).toHaveLength(2);
  });

  it('when not even HTTP answers, keeps trying sockets with backoff; a later endpoint starts over HTTP at once once polling worked', async () => {
    const { connection, states } = connect();
    connection.start(undefined);
    await refuseSockets();
    expect(fetched).toHaveLength(1);
    expect(states.at(-1)).toBe('reconnecting');
    expect(connection.nextAttemptAt).toBeDefined();

    answers.POST = { status: 201, body: endpoint };
    await vi.advanceTimersByTimeAsync(10_000);
    FakeSocket.made.at(-1)?.drop(1006);
    await vi.advanceTimersByTimeAsync(0);
    expect(states.at(-1)).toBe('polling');

    const sockets = FakeSocket.made.length;
    connection.start(undefined);
    expect(states.at(-1)).toBe('connecting');
    await vi.advanceTimersByTimeAsync(0);
    expect(states.at(-1)).toBe('polling');
    expect(FakeSocket.made).toHaveLength(sockets);
    expect(fetched.filter((request) => request.method === 'POST')).toHaveLength(3);
  });

  it('drops what an HTTP request for a left endpoint brings', async () => {
    const { connection, welcomes } = connect();
    connection.start(undefined);
    answers.POST = { status: 201, body: endpoint };
    FakeSocket.made.at(-1)?.drop(1006);
    await vi.advanceTimersByTimeAsync(1000);
    FakeSocket.made.at(-1)?.drop(1006);
    // The POST is out; the page leaves before it answers.
    connection.stop();
    await vi.advanceTimersByTimeAsync(0);
    expect(welcomes).toEqual([]);
  });
});
