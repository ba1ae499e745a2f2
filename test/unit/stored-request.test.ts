import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { openDatabase } from '../../src/one-process/sqlite-database.js';
import { createSqliteStore } from '../../src/one-process/sqlite-store.js';
import { BadFrameError, decodeRequestFrame, decodeServerMessage } from '../../src/shared/request-frame.js';
import { DEFAULT_RESPONSE } from '../../src/shared/schemas/response-config.js';
import { ONLY_DEFAULT } from '../../src/shared/answer-rules.js';
import { requestFrame } from '../../src/socket/frame.js';
import { STORED_REQUEST_OVERHEAD_BYTES } from '../../src/store/store.js';
import {
  capturedRequestOf,
  encodeRecord,
  recordBuffer,
  fromElement,
  toElement,
  v1RequestMessage,
} from '../../src/store/stored-request.js';

const ANSWER = '{"status":200,"delayMs":0,"by":"default"}';
const payloadOf = (frame: { chunks: Buffer[] }) => {
  const bytes = Buffer.concat(frame.chunks);
  const marker = (bytes[1] as number) & 0x7f;
  return bytes.subarray(marker < 126 ? 2 : marker === 126 ? 4 : 10);
};

describe('a stored request as bytes', () => {
  it('keeps answer and record side by side in one element, and reads them back without copying the record', () => {
    const record = encodeRecord('{"method":"POST"}', Buffer.from([0, 1, 2, 255]));
    const element = toElement(ANSWER, record);
    const stored = fromElement(4, element, '{"type":"forwarded"}');
    expect(stored).toEqual({ seq: 4, answer: ANSWER, record, forwarded: '{"type":"forwarded"}' });
    expect(stored.record.body.buffer).toBe(element.buffer);
    expect(capturedRequestOf(stored)).toEqual({
      seq: 4,
      method: 'POST',
      body: 'AAEC/w==',
      bodyEncoding: 'base64',
      answer: JSON.parse(ANSWER) as unknown,
    });
  });

  it('reads a request a store kept as a whole v1 message before records were bytes', () => {
    const record = encodeRecord('{"method":"PUT","url":"/x"}', Buffer.from('h\u00e9llo'));
    const v1 = Buffer.from(v1RequestMessage({ seq: 9, answer: ANSWER, record }));
    const stored = fromElement(9, v1);
    expect(capturedRequestOf(stored)).toEqual(capturedRequestOf({ seq: 9, answer: ANSWER, record }));
    const binary = encodeRecord('{"method":"PUT"}', Buffer.from([0xff, 0x00, 0x22]));
    const read = fromElement(1, Buffer.from(v1RequestMessage({ seq: 1, answer: ANSWER, record: binary })));
    expect(recordBuffer(read.record).equals(recordBuffer(binary))).toBe(true);
  });

  it('copies a small value out of a much larger buffer it was handed as a view of (a Redis read chunk)', () => {
    const chunk = Buffer.alloc(64 * 1024);
    const element = toElement(ANSWER, encodeRecord('{}', Buffer.from('small')));
    element.copy(chunk, 100);
    const stored = fromElement(1, chunk.subarray(100, 100 + element.length));
    expect(stored.record.body.toString()).toBe('small');
    expect(stored.record.body.buffer).not.toBe(chunk.buffer);
  });

  it('refuses a value that is neither, with a clear error', () => {
    expect(() => fromElement(3, Buffer.from([0, 0, 0]))).toThrow(/stored request 3: not an element/);
    expect(() => fromElement(3, Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4]))).toThrow(/not an element/);
  });
});

describe('the v2 request frame, as a client reads it', () => {
  const good = () => payloadOf(requestFrame(2 ** 40 + 5, ANSWER, encodeRecord('{"method":"GET"}', Buffer.from('ok'))));

  it('gives the request message the v1 text frame gives', () => {
    expect(decodeRequestFrame(good())).toEqual({
      type: 'request',
      request: {
        seq: 2 ** 40 + 5,
        method: 'GET',
        body: 'ok',
        bodyEncoding: 'utf8',
        answer: JSON.parse(ANSWER) as unknown,
      },
    });
    expect(decodeServerMessage('{"type":"cleared","clearedSeq":3}')).toEqual({ type: 'cleared', clearedSeq: 3 });
    expect(decodeServerMessage(new Uint8Array(good()).buffer)).toEqual(decodeRequestFrame(good()));
  });

  it('refuses every cut, an unknown kind, and lengths that run past the frame, without reading past it', () => {
    const frame = good();
    // The body is what follows the header, to the frame's end: any cut before it is refused.
    for (let length = 0; length < frame.length - 'ok'.length; length++) {
      expect(() => decodeRequestFrame(frame.subarray(0, length)), `cut at ${length}`).toThrow();
    }
    const kind = Buffer.from(frame);
    kind[0] = 2;
    expect(() => decodeRequestFrame(kind)).toThrow(new BadFrameError('unknown kind 2'));
    const answerLength = Buffer.from(frame);
    answerLength.writeUInt32BE(0xffffffff, 9);
    expect(() => decodeRequestFrame(answerLength)).toThrow(/answer runs past the frame/);
    const headerLength = Buffer.from(frame);
    headerLength.writeUInt32BE(0xffffffff, 13 + ANSWER.length);
    expect(() => decodeRequestFrame(headerLength)).toThrow(/header runs past the record/);
  });

  it('carries a megabyte body as its own bytes, not a copy, plus a small head', () => {
    const body = Buffer.alloc(1024 * 1024, 0x01);
    const frame = requestFrame(1, ANSWER, encodeRecord('{}', body));
    // The body is written from the stored buffer itself, not copied into the frame.
    expect(frame.chunks[1]).toBe(body);
    expect(frame.length - body.length).toBeLessThan(100);
  });
});

describe('the SQLite store after an upgrade', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('reads, answers and counts a request a release before stored as a v1 message', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookwatch-upgrade-'));
    dirs.push(dir);
    const db = openDatabase(join(dir, 'hookwatch.db'));
    const store = createSqliteStore({
      requestsPerEndpoint: 50,
      maxStoredBytes: 1 << 20,
      maxStoredBytesPerEndpoint: 1 << 20,
      maxResponseConfigBytes: 1 << 20,
      maxDiskBytes: 1 << 30,
      db,
      bus: createMemoryBus(),
    });
    await store.createEndpoint(
      {
        id: 'old',
        kind: 'kept',
        keyHash: 'ab'.repeat(32),
        createdAt: '2026-01-01T00:00:00.000Z',
        response: DEFAULT_RESPONSE,
      },
      { maxEndpoints: 10, deadlineMs: Date.now() + 60_000 },
    );
    const record = encodeRecord('{"method":"POST","url":"/x"}', Buffer.from('{"a":1}'));
    const v1 = Buffer.from(v1RequestMessage({ seq: 1, answer: ANSWER, record }));
    db.prepare('INSERT INTO requests (endpoint_id, seq, cost, message) VALUES (?, ?, ?, ?)').run(
      'old',
      1,
      v1.length + STORED_REQUEST_OVERHEAD_BYTES,
      v1,
    );
    db.prepare("UPDATE endpoints SET last_seq = 1 WHERE id = 'old'").run();

    const [stored] = (await store.readLog('old', 0))?.requests ?? [];
    expect(capturedRequestOf(stored as never)).toEqual(capturedRequestOf({ seq: 1, answer: ANSWER, record }));
    const forwarder = '{"status":202,"delayMs":5,"by":"forwarder"}';
    expect(await store.setAnswer('old', 1, forwarder)).toBe(true);
    const [answered] = (await store.readLog('old', 0))?.requests ?? [];
    expect(answered?.answer).toBe(forwarder);
    expect(answered && recordBuffer(answered.record).equals(recordBuffer(record))).toBe(true);
    const { cost } = db.prepare("SELECT cost FROM requests WHERE endpoint_id = 'old'").get() as { cost: number };
    expect(cost).toBe(toElement(forwarder, record).length + STORED_REQUEST_OVERHEAD_BYTES);

    // A row no release wrote (a corrupt file) is left out of the log, not the log's end.
    db.prepare('INSERT INTO requests (endpoint_id, seq, cost, message) VALUES (?, ?, ?, ?)').run(
      'old',
      2,
      200,
      Buffer.from([0, 0, 0, 9, 1]),
    );
    const corrupt = v1RequestMessage({ seq: 3, answer: ANSWER, record }).slice(0, -5);
    db.prepare('INSERT INTO requests (endpoint_id, seq, cost, message) VALUES (?, ?, ?, ?)').run(
      'old',
      3,
      200,
      Buffer.from(corrupt),
    );
    db.prepare("UPDATE endpoints SET last_seq = 3 WHERE id = 'old'").run();
    await store.appendRequest('old', 'kept', () => ({ record, choices: ONLY_DEFAULT, answers: [ANSWER] }), Date.now());
    expect((await store.readLog('old', 0))?.requests.map((request) => request.seq)).toEqual([1, 4]);
    expect(await store.setAnswer('old', 2, forwarder)).toBe(false);
    db.close();
  });

  it('marks its format with schema version 5, which an older release refuses', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookwatch-upgrade-'));
    dirs.push(dir);
    const db = openDatabase(join(dir, 'hookwatch.db'));
    expect(db.pragma('user_version', { simple: true })).toBe(5);
    expect(db.prepare('SELECT version FROM record_format').get()).toEqual({ version: 2 });
    db.close();
  });
});
