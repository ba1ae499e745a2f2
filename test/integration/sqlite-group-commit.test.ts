import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BusMessage } from '../../src/bus/bus.js';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { ONLY_DEFAULT } from '../../src/shared/answer-rules.js';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { DEFAULT_RESPONSE, type ResponseConfig } from '../../src/shared/schemas/response-config.js';
import { responseConfigCost } from '../../src/log/rulebook.js';
import { openDatabase, type SqliteDatabase } from '../../src/one-process/sqlite-database.js';
import { createSqliteStore, MAX_CAPTURES_PER_COMMIT } from '../../src/one-process/sqlite-store.js';
import {
  StoreUnavailableError,
  type Appended,
  type NewEntry,
  type EntryBuilder,
  type Store,
  type StoreLimits,
} from '../../src/store/store.js';
import { capturedRequestOf, encodeRecord, type StoredRequest } from '../../src/store/stored-request.js';
import { send } from '../helpers/http.js';
import { startInstance, type Instance } from '../helpers/instances.js';

const MIB = 1024 * 1024;
const HOUR = 60 * 60 * 1000;
const LIMITS: StoreLimits = {
  requestsPerEndpoint: 1000,
  maxStoredBytes: 256 * MIB,
  maxStoredBytesPerEndpoint: 64 * MIB,
  maxResponseConfigBytes: 64 * MIB,
};
const DEFAULT_ANSWER = '{"status":200,"delayMs":0,"by":"default"}';
const entryOf = (json: string): NewEntry => ({
  record: encodeRecord(json, new Uint8Array()),
  choices: ONLY_DEFAULT,
  answers: [DEFAULT_ANSWER],
});
/** Rule 0 answers once per configuration, then the default. */
const onceThenDefault: NewEntry = {
  record: encodeRecord('{}', new Uint8Array()),
  choices: [
    { rule: 0, times: 1 },
    { rule: -1, times: 0 },
  ],
  answers: ['"rule"', '"default"'],
};
const record = (stored: StoredRequest | undefined) =>
  stored ? (capturedRequestOf(stored) as unknown as Record<string, unknown>) : undefined;

/**
 * The SQLite store's group commit (issue 33, item 3) on a real database file: the captures of
 * one turn of the event loop commit in one transaction, each caller answered once it committed.
 */
describe('the SQLite store commits the captures of one turn together', () => {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookwatch-group-commit-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  /**
   * A store on a fresh database, watched: `inserted` counts the rows the database inserted so
   * far (a temporary trigger calls back into the test), and `commits` how many of them each
   * transaction the store ran inserted (its `db.transaction` is wrapped to read the count
   * before and after each one).
   */
  const open = (limits: Partial<StoreLimits> = {}) => {
    const db: SqliteDatabase = openDatabase(tempDir());
    cleanups.push(() => db.close());
    let inserted = 0;
    db.function('test_inserted', () => {
      inserted++;
      return null;
    });
    db.exec('CREATE TEMP TRIGGER test_count_inserts AFTER INSERT ON requests BEGIN SELECT test_inserted(); END');
    const commits: number[] = [];
    const transaction = db.transaction.bind(db);
    db.transaction = ((work: (...args: unknown[]) => unknown) =>
      transaction((...args: unknown[]) => {
        const before = inserted;
        const result = work(...args);
        if (inserted > before) commits.push(inserted - before);
        return result;
      })) as typeof db.transaction;
    const bus = createMemoryBus();
    const heard: Array<[string, BusMessage]> = [];
    bus.onMessage((id, message) => heard.push([id, message]));
    const store = createSqliteStore({ ...LIMITS, ...limits, maxDiskBytes: LIMITS.maxStoredBytes, db, bus });
    const create = (id: string, response: ResponseConfig = DEFAULT_RESPONSE, redact?: boolean) =>
      store.createEndpoint(
        {
          id,
          kind: 'kept',
          keyHash: 'ab'.repeat(32),
          createdAt: '2026-01-01T00:00:00.000Z',
          response,
          ...(redact === undefined ? {} : { redact }),
        },
        { maxEndpoints: 1000, deadlineMs: Date.now() + HOUR },
      );
    return { db, store, bus, heard, create, inserted: () => inserted, commits };
  };

  /** What each caller saw when its capture was answered: the capture, and the rows inserted by then. */
  interface Answered {
    appended: Appended | undefined;
    insertedThen: number;
    inTransactionThen: boolean;
    storedThen: Promise<StoredRequest | undefined>;
  }
  /** Starts a capture and notes, the moment it is answered, what the database holds. */
  const capture = (opened: ReturnType<typeof open>, id: string, recordFor: EntryBuilder): Promise<Answered> =>
    opened.store.appendRequest(id, 'kept', recordFor, Date.now()).then((appended) => ({
      appended,
      insertedThen: opened.inserted(),
      inTransactionThen: opened.db.inTransaction,
      // Its read runs now, not when awaited: what the store holds at the moment of the answer.
      storedThen: appended ? readSeq(opened.store, id, appended.seq) : Promise.resolve(undefined),
    }));
  const readSeq = async (store: Store, id: string, seq: number) =>
    (await store.readLog(id, seq - 1))?.requests.find((stored) => stored.seq === seq);
  const loggedNs = async (store: Store, id: string) =>
    (await store.readLog(id, 0))?.requests.map((stored) => [stored.seq, record(stored)?.n]);

  it('stores a burst to one endpoint and to several each once, numbered in arrival order, in one transaction, each caller answered after it committed', async () => {
    const opened = open();
    const ids = ['e0', 'e1', 'e2', 'e3', 'e4'];
    for (const id of ids) {
      await opened.create(id);
      await opened.bus.subscribe(id);
    }
    const burst = 200;
    const calls = Array.from({ length: burst }, (_, n) => ({ id: ids[n % ids.length] as string, n }));
    const answers = await Promise.all(calls.map(({ id, n }) => capture(opened, id, () => entryOf(`{"n":${n}}`))));

    // One commit: every caller saw all of the burst inserted, none saw an open transaction, and each found its request stored.
    expect(opened.commits).toEqual([burst]);
    expect(new Set(answers.map((answer) => answer.insertedThen))).toEqual(new Set([burst]));
    expect(answers.every((answer) => !answer.inTransactionThen)).toBe(true);
    for (const [at, answer] of answers.entries()) expect(record(await answer.storedThen)?.n).toBe(calls[at]?.n);
    // Each endpoint numbered its captures 1, 2, 3… in the order they arrived, each stored once.
    for (const id of ids) {
      const sent = calls.filter((call) => call.id === id).map((call, at) => [at + 1, call.n]);
      expect(answers.filter((_, at) => calls[at]?.id === id).map((answer) => answer.appended?.seq)).toEqual(
        sent.map(([seq]) => seq),
      );
      expect(await loggedNs(opened.store, id)).toEqual(sent);
      // And announced in that order.
      expect(opened.heard.filter(([heardId]) => heardId === id).map(([, message]) => message.seq)).toEqual(
        sent.map(([seq]) => seq),
      );
    }
    expect(opened.db.prepare('SELECT id, last_seq FROM endpoints ORDER BY id').all()).toEqual(
      ids.map((id) => ({ id, last_seq: burst / ids.length })),
    );
  });

  it('fails a capture whose record throws alone; a failing commit fails every capture in it and stores none of them', async () => {
    const opened = open();
    await opened.create('a');
    // One bad record among ten: the other nine are stored, numbered without a hole.
    const first = await Promise.allSettled(
      Array.from({ length: 10 }, (_, n) =>
        opened.store.appendRequest(
          'a',
          'kept',
          () => {
            if (n === 3) throw new Error('this record cannot be built');
            return entryOf(`{"n":${n}}`);
          },
          Date.now(),
        ),
      ),
    );
    expect(
      first.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value?.seq : (outcome.reason as Error).message)),
    ).toEqual([1, 2, 3, 'this record cannot be built', 4, 5, 6, 7, 8, 9]);
    expect((await loggedNs(opened.store, 'a'))?.map(([seq]) => seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);

    // The database refuses one insert of the next burst (as a full disk would): the whole commit
    // rolls back, each of its callers is told the store is unavailable, and nothing is announced.
    await opened.bus.subscribe('a');
    opened.db.exec(
      "CREATE TEMP TRIGGER test_refuse BEFORE INSERT ON requests WHEN instr(NEW.message, CAST('poison' AS BLOB)) > 0 BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
    );
    const failed = await Promise.allSettled(
      Array.from({ length: 20 }, (_, n) =>
        opened.store.appendRequest(
          'a',
          'kept',
          () => (n === 15 ? entryOf('{"poison":true}') : onceThenDefault),
          Date.now(),
        ),
      ),
    );
    expect(
      failed.every((outcome) => outcome.status === 'rejected' && outcome.reason instanceof StoreUnavailableError),
    ).toBe(true);
    expect((await opened.store.readLog('a', 0))?.lastSeq).toBe(9);
    expect((await opened.store.readLog('a', 0))?.requests).toHaveLength(9);
    expect(opened.heard).toEqual([]);
    expect(opened.db.prepare("SELECT rule_counts FROM endpoints WHERE id = 'a'").get()).toEqual({ rule_counts: '{}' });

    // Once the database takes writes again, the numbering goes on where the last commit left
    // it, and the rule the failed commit used up answers again (its count was rolled back too).
    opened.db.exec('DROP TRIGGER test_refuse');
    const next = await opened.store.appendRequest('a', 'kept', () => onceThenDefault, Date.now());
    expect([next?.seq, next?.choice]).toEqual([10, 0]);
  });

  it('takes a change of configuration into account from the very next capture', async () => {
    const opened = open();
    const { store } = opened;
    await opened.create('a');
    const seen: Array<[number, boolean]> = [];
    const noting: EntryBuilder = (response, redact) => {
      seen.push([response.status, redact]);
      return entryOf('{}');
    };
    expect((await store.appendRequest('a', 'kept', noting, Date.now()))?.response.status).toBe(200);
    await store.setResponse('a', { ...DEFAULT_RESPONSE, status: 201 });
    expect((await store.appendRequest('a', 'kept', noting, Date.now()))?.response.status).toBe(201);
    // Changed in the same turn as a capture that is still waiting for its commit: the capture is
    // stored under the configuration in force when it is committed.
    const waiting = store.appendRequest('a', 'kept', noting, Date.now());
    const set = store.setResponse('a', { ...DEFAULT_RESPONSE, status: 202 });
    expect([(await waiting)?.response.status, await set]).toEqual([202, 'set']);
    // An extension leaves the configuration as it was.
    await store.extendEndpoint('a', Date.now() + 2 * HOUR);
    expect((await store.appendRequest('a', 'kept', noting, Date.now()))?.response.status).toBe(202);
    // A new endpoint under the same id brings its own configuration and redaction.
    await store.deleteEndpoint('a');
    expect(await store.appendRequest('a', 'kept', noting, Date.now())).toBeUndefined();
    await opened.create('a', { ...DEFAULT_RESPONSE, status: 418 }, false);
    expect((await store.appendRequest('a', 'kept', noting, Date.now()))?.response.status).toBe(418);
    expect(seen).toEqual([
      [200, true],
      [201, true],
      [202, true],
      [202, true],
      [418, false],
    ]);

    // A rule's answers start again with each configuration set.
    const choices = async () => [
      (await store.appendRequest('a', 'kept', () => onceThenDefault, Date.now()))?.choice,
      (await store.appendRequest('a', 'kept', () => onceThenDefault, Date.now()))?.choice,
    ];
    expect(await choices()).toEqual([0, 1]);
    await store.setResponse('a', { ...DEFAULT_RESPONSE, status: 418 });
    expect(await choices()).toEqual([0, 1]);
  });

  it('keeps its parsed configurations within their budget, and an endpoint whose one went out of it still answers with its own and its rule counts', async () => {
    const response = (status: number): ResponseConfig => ({ ...DEFAULT_RESPONSE, status });
    // Room for three parsed configurations; ten endpoints take turns.
    const opened = open({ maxResponseConfigBytes: 3 * responseConfigCost(response(200)) + 100 });
    const { store } = opened;
    const ids = Array.from({ length: 10 }, (_, n) => `e${n}`);
    for (const [n, id] of ids.entries()) await opened.create(id, response(200 + n));
    const twice = {
      ...onceThenDefault,
      choices: [
        { rule: 0, times: 2 },
        { rule: -1, times: 0 },
      ],
    };
    for (let round = 0; round < 3; round++) {
      const statuses = await Promise.all(ids.map((id) => store.appendRequest(id, 'kept', () => twice, Date.now())));
      expect(statuses.map((appended) => appended?.response.status)).toEqual(ids.map((_, n) => 200 + n));
      // Rule 0's two answers, counted on disk across the configurations that left the cache, then the default.
      expect(new Set(statuses.map((appended) => appended?.choice))).toEqual(new Set([round < 2 ? 0 : 1]));
      // One at a time, each parse pushing an older one out.
      for (const id of ids)
        expect((await store.appendRequest(id, 'kept', () => entryOf('{}'), Date.now()))?.response.status).toBe(
          200 + ids.indexOf(id),
        );
    }
  });

  it('stays bounded with 5,000 captures in flight at once: commits of at most MAX_CAPTURES_PER_COMMIT, the event loop turning between them, and every capture answered', async () => {
    const opened = open();
    const ids = Array.from({ length: 10 }, (_, n) => `e${n}`);
    for (const id of ids) await opened.create(id);
    const burst = 5000;
    let answered = 0;
    const calls = Array.from({ length: burst }, (_, n) => ({ id: ids[n % ids.length] as string, n }));
    const pending = calls.map(({ id, n }) =>
      capture(opened, id, () => entryOf(`{"n":${n}}`)).then((answer) => {
        answered++;
        return answer;
      }),
    );
    // Queued behind the first commit: it runs before the last capture is answered.
    const turned = new Promise<number>((resolve) => setImmediate(() => resolve(answered)));
    const answers = await Promise.all(pending);
    expect(await turned).toBeLessThan(burst);

    // All arrived in one turn: full commits, then the rest in one more.
    const full = Math.floor(burst / MAX_CAPTURES_PER_COMMIT);
    expect(opened.commits).toEqual([
      ...Array.from({ length: full }, () => MAX_CAPTURES_PER_COMMIT),
      burst - full * MAX_CAPTURES_PER_COMMIT,
    ]);
    // Each caller was answered after its own commit, before the next one began.
    const ends = opened.commits.map((_, at) => opened.commits.slice(0, at + 1).reduce((sum, size) => sum + size, 0));
    expect(answers.map((answer) => answer.insertedThen)).toEqual(
      answers.map((_, at) => ends[Math.floor(at / MAX_CAPTURES_PER_COMMIT)]),
    );
    for (const id of ids) {
      const sent = calls.filter((call) => call.id === id).map((call, at) => [at + 1, call.n]);
      expect(await loggedNs(opened.store, id)).toEqual(sent);
    }
  });
});

describe('a kept endpoint on SQLite in a server process', () => {
  let instance: Instance | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await instance?.kill();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('answers each of 50 concurrent senders only once its request is committed: after a SIGKILL every answered request is there, once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hookwatch-group-commit-server-'));
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir, RATE_LIMIT_PER_ENDPOINT: '0', RATE_LIMIT_PER_ADDRESS: '0' };
    instance = await startInstance(env);
    const created = JSON.parse(
      (
        await send(`${instance.baseUrl}/api/endpoints`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"kind":"kept"}',
        })
      ).text,
    ) as { id: string; key: string; url: string };
    const bodies = Array.from({ length: 50 }, (_, n) => `sender ${n}`);
    const statuses = await Promise.all(
      bodies.map(async (body) => (await send(created.url, { method: 'POST', body })).status),
    );
    expect(statuses.every((status) => status === 200)).toBe(true);
    // No shutdown: what was answered must already be in the database.
    await instance.kill();
    instance = await startInstance(env);
    const polled = await send(`${instance.baseUrl}/api/endpoints/${created.id}/requests?afterSeq=0`, {
      headers: { authorization: `Bearer ${created.key}` },
    });
    const { requests } = JSON.parse(polled.text) as { requests: CapturedRequest[] };
    expect(requests.map((request) => request.seq)).toEqual(bodies.map((_, at) => at + 1));
    expect(requests.map((request) => request.body).sort()).toEqual([...bodies].sort());
  }, 60_000);
});
