import type { Bus } from '../bus/bus.js';
import { evictedMessage } from '../shared/protocol.js';
import type { ResponseConfig } from '../shared/schemas/response-config.js';
import {
  chooseAnswer,
  evictAcrossEndpoints,
  nextSeq,
  responseConfigCost,
  storedCost,
  trimEndpoint,
  type HeldAnywhere,
} from '../log/rulebook.js';
import {
  answeredMessage,
  clearedMessage,
  DELETED_MESSAGE,
  extendedMessage,
  removedMessage,
  responseChangedMessage,
  watchersMessage,
} from '../shared/server-messages.js';
import { createResponderClaims } from './responder-claims.js';
import { createGroupCommit } from './group-commit.js';
import { createSizedCache } from './sized-cache.js';
import { diskReserve, type SqliteDatabase } from './sqlite-database.js';
import {
  MAX_LISTED_ENDPOINTS,
  redactsSecrets,
  StoreUnavailableError,
  type Appended,
  type EndpointKind,
  type EndpointRecord,
  type EntryBuilder,
  type Store,
  type StoreLimits,
} from '../store/store.js';
import { storedRequestsOf, toElement, type RecordBytes } from '../store/stored-request.js';

export interface SqliteStoreOptions extends StoreLimits {
  /** An open, migrated database (sqlite-database.ts) that main.ts owns. */
  db: SqliteDatabase;
  /** Where request and event messages are announced. */
  bus: Bus;
  /** Bytes of stored requests on disk, across endpoints: past it the oldest go first. */
  maxDiskBytes: number;
  /** The clock deadlines are judged by (tests inject one). */
  now?: () => number;
}

/** Endpoints swept per call, so a sweep never holds the event loop long. */
const SWEEP_BATCH = 500;
/**
 * Captures committed in one transaction at most: a larger burst goes in several, one per turn of
 * the event loop, so a commit holds the loop a few milliseconds at most (docs/performance.md).
 */
export const MAX_CAPTURES_PER_COMMIT = 256;

interface EndpointRow {
  kind: EndpointKind;
  record: string;
  response: string;
  deadline_ms: number;
  last_seq: number;
  cleared_seq: number;
  rule_counts: string;
}

/** What the store keeps in memory of each endpoint's stored requests, for its budgets. */
interface Held {
  count: number;
  bytes: number;
}

/** A stored request's row as the rulebook reads it (heldOf, heldAnywhere). */
interface HeldRow extends HeldAnywhere {
  id: number;
}

/** What a capture needs of its endpoint's configuration, parsed once and cached (createSizedCache). */
interface ParsedConfig {
  response: ResponseConfig;
  redact: boolean;
  /** Answers each rule has given since the configuration was set (the `rule_counts` column): chooseAnswer counts in it. */
  counts: Record<number, number>;
}

/** A capture waiting for its turn's commit. */
interface QueuedCapture {
  id: string;
  kind: EndpointKind;
  recordFor: EntryBuilder;
  capturedAtMs: number;
  resolve: (appended: Appended | undefined) => void;
  reject: (error: unknown) => void;
}

/** What a commit knows of an endpoint it stores into: read at its first capture, written back once at its end. */
interface BatchEndpoint {
  kind: EndpointKind;
  lastSeq: number;
  config: ParsedConfig;
  /** A capture took a seq: `last_seq` is written at the end. */
  grew: boolean;
  /** A rule with `times` answered: `rule_counts` is written at the end. */
  counted: boolean;
}

/** A capture as its commit stored it, announced once the commit is done. */
interface StoredCapture {
  seq: number;
  answer: string;
  record: RecordBytes;
  response: ResponseConfig;
  choice: number;
  evictedThrough: Array<[string, number]>;
}

/** What became of one capture in a commit: stored, no such endpoint (undefined), or its own failure (its record threw) that stored nothing of it. */
type CaptureOutcome = StoredCapture | undefined | { failed: unknown };

/**
 * Endpoints and their requests in a SQLite database (better-sqlite3), so kept
 * endpoints outlive a restart with nothing to install. Every method is one transaction, and the
 * process holds the database alone (sqlite-database.ts), so the byte counts it keeps in memory
 * (loaded at start) stay true. Calls are synchronous: each is a few indexed statements on a WAL
 * database (docs/performance.md measures a capture), except captures, which are committed
 * together: those of one turn of the event loop in one transaction (group commit, see
 * `appendRequest`), each caller answered once it committed. Leases and watcher counts of live
 * endpoints are held in memory: they describe this process, and die with it. A failed statement
 * (disk full, read-only, I/O error) surfaces as StoreUnavailableError: 503 STORE_UNAVAILABLE.
 */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const { db, bus } = options;
  const now = options.now ?? Date.now;
  const sql = prepareStatements(db);
  const held = new Map<string, Held>();
  /** Responders (`hookwatch forward --respond`): sockets of this process, so held here and gone with it. */
  const responders = createResponderClaims(now);
  let totalBytes = 0;
  let evictedRequests = 0;
  /** Bytes of every endpoint's response configuration on disk, against MAX_RESPONSE_CONFIG_BYTES. */
  let configBytes = 0;
  /**
   * Each endpoint's configuration, redaction and rule counts, parsed: a capture reads them here,
   * not from JSON columns per request. Filled at an endpoint's first capture, refreshed by every
   * change of them (setResponse, extendEndpoint), dropped with the endpoint and after a failed
   * transaction; costs counted as responseConfigCost, at most MAX_RESPONSE_CONFIG_BYTES
   * together, the oldest out first (an endpoint let go is parsed again at its next capture).
   */
  const parsed = createSizedCache<ParsedConfig>(options.maxResponseConfigBytes);
  /** The counts as the database has them: at start, and after a transaction that failed part-way. */
  const loadHeld = () => {
    held.clear();
    parsed.clear();
    totalBytes = 0;
    for (const row of sql.heldByEndpoint.all() as Array<{ endpoint_id: string; count: number; bytes: number }>) {
      held.set(row.endpoint_id, { count: row.count, bytes: row.bytes });
      totalBytes += row.bytes;
    }
    configBytes = (sql.configBytes.get() as { bytes: number | null }).bytes ?? 0;
  };
  loadHeld();
  /** Live endpoints: holder -> lease end; and holder -> sockets watching there. */
  const leases = new Map<string, Map<string, number>>();
  const watchers = new Map<string, Map<string, number>>();

  /** The database refused or is gone (disk full, read-only, I/O error, closed): not a bug here. */
  const unavailable = (error: unknown): unknown =>
    !db.open || (error instanceof Error && error.name === 'SqliteError') ? new StoreUnavailableError(error) : error;
  /** Runs `work` in one transaction; any database failure is the store being unavailable. */
  const inTransaction = <T>(work: () => T): T => {
    try {
      return db.transaction(work)();
    } catch (error) {
      // Rolled back: what was counted meanwhile did not happen.
      if (db.open) loadHeld();
      throw unavailable(error);
    }
  };
  const reserve = options.db.memory ? undefined : diskReserve(db);
  /**
   * A transaction that frees (a delete, a clear, the sweep): on a full disk the reserve goes and
   * it runs again, so deleting always works (sqlite-database.ts, diskReserve).
   */
  const freeing = <T>(work: () => T): T => {
    try {
      return inTransaction(work);
    } catch (error) {
      if (!isDiskFull(error) || !reserve?.release()) throw error;
      return inTransaction(work);
    }
  };
  /** One read statement: no transaction needed (and none paid for), the same failure handling. */
  const reading = <T>(work: () => T): T => {
    try {
      return work();
    } catch (error) {
      throw unavailable(error);
    }
  };
  const aliveRow = (id: string): EndpointRow | undefined => {
    const row = sql.endpoint.get(id) as EndpointRow | undefined;
    return row && row.deadline_ms > now() ? row : undefined;
  };
  const toRecord = (id: string, row: EndpointRow): EndpointRecord => ({
    ...(JSON.parse(row.record) as Omit<EndpointRecord, 'response'>),
    id,
    response: JSON.parse(row.response) as ResponseConfig,
  });

  /** The endpoint's configuration, redaction and rule counts, parsed once (the endpoint exists). */
  const parsedConfig = (id: string): ParsedConfig => {
    let config = parsed.get(id);
    if (!config) {
      const row = sql.endpoint.get(id) as EndpointRow;
      const response = JSON.parse(row.response) as ResponseConfig;
      const redact = redactsSecrets(JSON.parse(row.record) as Pick<EndpointRecord, 'kind' | 'redact'>);
      config = { response, redact, counts: JSON.parse(row.rule_counts) as Record<number, number> };
      parsed.set(id, config, responseConfigCost(response));
    }
    return config;
  };

  /** Deletes a stored request the rulebook let go, and takes its cost off the counts. */
  const drop = (row: HeldRow) => {
    sql.deleteRequest.run(row.id);
    account(row.endpointId, -1, -row.costBytes);
  };
  const account = (id: string, count: number, bytes: number) => {
    const entry = held.get(id) ?? { count: 0, bytes: 0 };
    entry.count += count;
    entry.bytes += bytes;
    totalBytes += bytes;
    if (entry.count <= 0) held.delete(id);
    else held.set(id, entry);
  };
  const removeAll = (id: string) => {
    sql.deleteRequestsOf.run(id);
    const entry = held.get(id);
    if (entry) account(id, -entry.count, -entry.bytes);
  };
  const forget = (id: string) => {
    removeAll(id);
    configBytes -= (sql.configBytesOf.get(id) as { bytes: number } | undefined)?.bytes ?? 0;
    parsed.delete(id);
    sql.deleteEndpoint.run(id);
    leases.delete(id);
    watchers.delete(id);
    responders.forget(id);
  };

  /**
   * After the endpoint grew (a capture, a forward result): the rulebook's trims, the endpoint's
   * own and then the disk budget's (MAX_DISK_BYTES) across endpoints. Returns the `evicted`
   * announcements to make once committed, [endpoint, through seq], in the order they were decided.
   */
  const keepBudgets = (id: string): Array<[string, number]> => {
    const trim = trimEndpoint(
      cursor(() => sql.heldOf.iterate(id)),
      held.get(id) ?? { count: 0, bytes: 0 },
      options,
    );
    for (const row of trim.dropped) drop(row);
    const eviction = evictAcrossEndpoints(
      cursor(() => sql.heldAnywhere.iterate()),
      totalBytes,
      options.maxDiskBytes,
    );
    for (const row of eviction.dropped) drop(row);
    evictedRequests += trim.evicted + eviction.dropped.length;
    return trim.evictedThroughSeq === undefined
      ? eviction.evictedThrough
      : [[id, trim.evictedThroughSeq], ...eviction.evictedThrough];
  };

  /** The endpoint a commit stores into, read at its first capture there; null when there is none alive. */
  const batchEndpoint = (id: string, endpoints: Map<string, BatchEndpoint | null>): BatchEndpoint | null => {
    let endpoint = endpoints.get(id);
    if (endpoint === undefined) {
      const row = sql.appendRow.get(id) as Pick<EndpointRow, 'kind' | 'deadline_ms' | 'last_seq'> | undefined;
      endpoint =
        row && row.deadline_ms > now()
          ? { kind: row.kind, lastSeq: row.last_seq, config: parsedConfig(id), grew: false, counted: false }
          : null;
      endpoints.set(id, endpoint);
    }
    return endpoint;
  };

  /**
   * One capture within its commit. Its entry is built before anything of it is written, so a
   * record that throws fails that capture alone: nothing of it is stored, its seq is not taken,
   * and the others of the commit go on. A failing statement throws out of the commit, which
   * fails every capture in it.
   */
  const storeCapture = (capture: QueuedCapture, endpoints: Map<string, BatchEndpoint | null>): CaptureOutcome => {
    const endpoint = batchEndpoint(capture.id, endpoints);
    if (!endpoint || endpoint.kind !== capture.kind) return undefined;
    const { response, redact, counts } = endpoint.config;
    let entry;
    try {
      entry = capture.recordFor(response, redact);
    } catch (error) {
      return { failed: error };
    }
    const seq = nextSeq(endpoint.lastSeq);
    const choice = chooseAnswer(entry.choices, counts);
    if (entry.choices[choice]?.times) endpoint.counted = true;
    const answer = entry.answers[choice] as string;
    const element = toElement(answer, entry.record);
    const cost = storedCost(element.length, undefined);
    sql.insertRequest.run(capture.id, seq, cost, element);
    endpoint.lastSeq = seq;
    endpoint.grew = true;
    account(capture.id, 1, cost);
    return { seq, answer, record: entry.record, response, choice, evictedThrough: keepBudgets(capture.id) };
  };

  /** The captures of one commit, in arrival order (so their seqs follow it), and each endpoint's counters written once. */
  const storeCaptures = (batch: QueuedCapture[]): CaptureOutcome[] => {
    const endpoints = new Map<string, BatchEndpoint | null>();
    const outcomes = batch.map((capture) => storeCapture(capture, endpoints));
    for (const [id, endpoint] of endpoints) {
      if (endpoint?.grew) sql.setLastSeq.run(endpoint.lastSeq, id);
      if (endpoint?.counted) sql.setRuleCounts.run(JSON.stringify(endpoint.config.counts), id);
    }
    return outcomes;
  };

  /** Announces a committed capture (the request, then what left to make room) and answers its caller once the request is announced. */
  const announce = (capture: QueuedCapture, outcome: CaptureOutcome) => {
    if (outcome === undefined) return capture.resolve(undefined);
    if ('failed' in outcome) return capture.reject(outcome.failed);
    const { seq, answer, record, response, choice, evictedThrough } = outcome;
    const published = bus.publish(capture.id, { seq, request: { answer, record }, capturedAtMs: capture.capturedAtMs });
    for (const [endpointId, throughSeq] of evictedThrough)
      void bus.publish(endpointId, { data: evictedMessage(throughSeq) });
    published.then(
      () => capture.resolve({ seq, response, choice, responder: responders.holder(capture.id) !== undefined }),
      capture.reject,
    );
  };

  /** Captures of one turn commit together (group-commit.ts), each caller answered once its request is committed and announced. */
  const enqueueCapture = createGroupCommit<QueuedCapture, CaptureOutcome>({
    maxBatch: MAX_CAPTURES_PER_COMMIT,
    commit: (batch) => inTransaction(() => storeCaptures(batch)),
    settle: announce,
    fail: (capture, error) => capture.reject(error),
  });

  return {
    async createEndpoint(endpoint, { maxEndpoints, deadlineMs }) {
      const { response, id, ...rest } = endpoint;
      return inTransaction(() => {
        if (aliveRow(id)) return 'taken';
        if ((sql.countAliveOfKind.get(endpoint.kind, now()) as { n: number }).n >= maxEndpoints) return 'full';
        forget(id);
        const responseJson = JSON.stringify(response);
        sql.insertEndpoint.run(id, endpoint.kind, JSON.stringify(rest), responseJson, deadlineMs);
        configBytes += Buffer.byteLength(responseJson);
        if (endpoint.creator !== undefined) sql.setCreator.run(endpoint.creator, id);
        return 'created';
      });
    },

    async extendEndpoint(id, deadlineMs) {
      const extended = inTransaction(() => {
        const row = aliveRow(id);
        if (!row || row.kind !== 'kept') return undefined;
        const record = {
          ...(JSON.parse(row.record) as Omit<EndpointRecord, 'response' | 'id'>),
          expiresAt: new Date(deadlineMs).toISOString(),
        };
        sql.extend.run(JSON.stringify(record), deadlineMs, id);
        // The record changed: the next capture parses it again rather than trust what was derived from the old one.
        parsed.delete(id);
        return { ...record, id, response: JSON.parse(row.response) as ResponseConfig };
      });
      if (extended?.expiresAt) await bus.publish(id, { data: extendedMessage(extended.expiresAt) });
      return extended;
    },

    async getEndpoint(id) {
      const row = reading(() => aliveRow(id));
      if (!row) return undefined;
      const responder = responders.holder(id);
      return responder === undefined ? toRecord(id, row) : { ...toRecord(id, row), responder };
    },

    async findEndpointKind(id) {
      // Asked before every capture: only the two columns it needs, not the record and configuration.
      const row = reading(() => sql.appendRow.get(id) as Pick<EndpointRow, 'kind' | 'deadline_ms'> | undefined);
      return row && row.deadline_ms > now() ? row.kind : undefined;
    },

    async deleteEndpoint(id) {
      const wasAlive = freeing(() => {
        const alive = aliveRow(id) !== undefined;
        forget(id);
        return alive;
      });
      if (wasAlive) await bus.publish(id, { data: DELETED_MESSAGE, ends: true });
      return wasAlive;
    },

    async countEndpoints() {
      return reading(() => (sql.countAlive.get(now()) as { n: number }).n);
    },

    async listEndpoints(creator) {
      const rows = reading(
        () => sql.byCreator.all(creator, now(), MAX_LISTED_ENDPOINTS) as Array<EndpointRow & { id: string }>,
      );
      return rows.map((row) => toRecord(row.id, row)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },

    async holdEndpoints(ids, holderId, leaseUntilMs, graceMs) {
      return inTransaction(() => {
        const gone: string[] = [];
        for (const id of ids) {
          const row = aliveRow(id);
          if (!row) {
            gone.push(id);
            continue;
          }
          if (row.kind !== 'live') continue;
          const of = leases.get(id) ?? new Map<string, number>();
          of.set(holderId, leaseUntilMs);
          leases.set(id, of);
          if (leaseUntilMs + graceMs > row.deadline_ms) sql.setDeadline.run(leaseUntilMs + graceMs, id);
        }
        return gone;
      });
    },

    async countWatchers(id, holderId, localCount) {
      if (!reading(() => aliveRow(id))) return undefined;
      const of = watchers.get(id) ?? new Map<string, number>();
      if (localCount > 0) of.set(holderId, localCount);
      else of.delete(holderId);
      watchers.set(id, of);
      const at = now();
      let total = 0;
      for (const [holder, count] of of)
        if (holder === holderId || (leases.get(id)?.get(holder) ?? 0) > at) total += count;
      await bus.publish(id, { data: watchersMessage(total) });
      return total;
    },

    async releaseEndpoint(id, holderId, graceMs) {
      inTransaction(() => {
        const row = aliveRow(id);
        if (!row || row.kind !== 'live') return;
        const of = leases.get(id);
        of?.delete(holderId);
        const at = now();
        let lastLease = at;
        for (const [holder, until] of of ?? []) {
          if (until <= at) of?.delete(holder);
          else lastLease = Math.max(lastLease, until);
        }
        sql.setDeadline.run(lastLease + graceMs, id);
      });
    },

    async sweepExpired() {
      const swept = freeing(() => {
        const expired = sql.expired.all(now(), SWEEP_BATCH) as Array<{ id: string }>;
        for (const { id } of expired) forget(id);
        return expired.length;
      });
      reserve?.restore();
      return swept;
    },

    async setResponse(id, response) {
      const json = JSON.stringify(response);
      const set = inTransaction(() => {
        const before = (sql.configBytesOf.get(id) as { bytes: number } | undefined)?.bytes;
        if (before === undefined || !aliveRow(id)) return undefined;
        // Configurations are stored bytes too: on disk, and parsed in memory for the captures.
        const bytes = Buffer.byteLength(json);
        if (configBytes - before + bytes > options.maxResponseConfigBytes) return 'full';
        if (sql.setResponse.run(json, id, now()).changes === 0) return undefined;
        configBytes += bytes - before;
        // The next capture parses the new configuration, with its counts started again (the statement reset them).
        parsed.delete(id);
        return 'set';
      });
      if (set !== 'set') return set;
      await bus.publish(id, { data: responseChangedMessage(response) });
      return 'set';
    },

    /**
     * Queued for the turn's group commit (above): answered once the transaction holding it
     * committed and the request was announced. `giveUpAtMs` is not needed: a commit waits at
     * most for the captures queued before it, never for a network.
     */
    appendRequest(id, kind, recordFor, capturedAtMs) {
      return new Promise<Appended | undefined>((resolve, reject) => {
        enqueueCapture({ id, kind, recordFor, capturedAtMs, resolve, reject });
      });
    },

    async setAnswer(id, seq, answerJson) {
      const changed = inTransaction(() => {
        if (!aliveRow(id)) return false;
        const row = sql.request.get(id, seq) as { message: Buffer; cost: number } | undefined;
        const [stored] = row ? storedRequestsOf([[seq, row.message, undefined]]) : [];
        if (!row || !stored) return false;
        const element = toElement(answerJson, stored.record);
        const growth = element.length - row.message.length;
        sql.setMessage.run(element, row.cost + growth, id, seq);
        account(id, 0, growth);
        return true;
      });
      if (changed) await bus.publish(id, { data: answeredMessage(seq, answerJson) });
      return changed;
    },

    async setResponder(id, token, untilMs, action) {
      if (inTransaction(() => aliveRow(id)) === undefined) return false;
      const announce = responders.apply(id, token, untilMs, action);
      if (announce) await bus.publish(id, { data: announce });
      return announce !== false;
    },

    async readLog(id, afterSeq) {
      return inTransaction(() => {
        const row = aliveRow(id);
        if (!row) return undefined;
        const rows = sql.requestsAfter.all(id, afterSeq) as Array<{
          seq: number;
          message: Buffer;
          forwarded: string | null;
        }>;
        const requests = storedRequestsOf(
          rows.map(({ seq, message, forwarded }) => [seq, message, forwarded ?? undefined]),
        );
        return { requests, lastSeq: row.last_seq, clearedSeq: row.cleared_seq };
      });
    },

    async setForwarded(id, seq, message) {
      const kept = inTransaction(() => {
        if (!aliveRow(id)) return undefined;
        const row = sql.requestCost.get(id, seq) as
          { message: Buffer; forwarded: string | null; cost: number } | undefined;
        if (!row) return undefined;
        // Counted with its request: a grown request counts against both budgets like a new one.
        const growth =
          storedCost(row.message.length, message) - storedCost(row.message.length, row.forwarded ?? undefined);
        sql.setForwarded.run(message, row.cost + growth, id, seq);
        account(id, 0, growth);
        return keepBudgets(id);
      });
      if (!kept) return false;
      await bus.publish(id, { data: message });
      for (const [endpointId, throughSeq] of kept) void bus.publish(endpointId, { data: evictedMessage(throughSeq) });
      return true;
    },

    async deleteRequest(id, seq) {
      const removed = freeing(() => {
        if (!aliveRow(id)) return undefined;
        const row = sql.deleteRequestOf.get(id, seq) as { cost: number } | undefined;
        if (!row) return false;
        account(id, -1, -row.cost);
        return true;
      });
      if (removed) await bus.publish(id, { data: removedMessage(seq) });
      return removed;
    },

    async clearRequests(id) {
      const cleared = freeing(() => {
        const row = aliveRow(id);
        if (!row) return undefined;
        removeAll(id);
        sql.setCleared.run(row.last_seq, id);
        return row.last_seq;
      });
      if (cleared !== undefined) await bus.publish(id, { data: clearedMessage(cleared) });
      return cleared;
    },

    stats: async () => ({ storedBytes: totalBytes, evictedRequests, responseConfigBytes: configBytes }),
  };
}

function prepareStatements(db: SqliteDatabase) {
  return {
    endpoint: db.prepare(
      'SELECT kind, record, response, deadline_ms, last_seq, cleared_seq, rule_counts FROM endpoints WHERE id = ?',
    ),
    // A capture's read (and findEndpointKind's): the configuration and rule counts come from the parsed cache.
    appendRow: db.prepare('SELECT kind, deadline_ms, last_seq FROM endpoints WHERE id = ?'),
    configBytes: db.prepare('SELECT SUM(length(CAST(response AS BLOB))) AS bytes FROM endpoints'),
    configBytesOf: db.prepare('SELECT length(CAST(response AS BLOB)) AS bytes FROM endpoints WHERE id = ?'),
    insertEndpoint: db.prepare(
      'INSERT INTO endpoints (id, kind, record, response, deadline_ms) VALUES (?, ?, ?, ?, ?)',
    ),
    deleteEndpoint: db.prepare('DELETE FROM endpoints WHERE id = ?'),
    countAlive: db.prepare('SELECT COUNT(*) AS n FROM endpoints WHERE deadline_ms > ?'),
    setCreator: db.prepare('UPDATE endpoints SET creator = ? WHERE id = ?'),
    // Those living longest first, so past the limit the nearest to expiring are left out; the caller orders them.
    byCreator: db.prepare(
      'SELECT * FROM endpoints WHERE creator = ? AND deadline_ms > ? ORDER BY deadline_ms DESC LIMIT ?',
    ),
    countAliveOfKind: db.prepare('SELECT COUNT(*) AS n FROM endpoints WHERE kind = ? AND deadline_ms > ?'),
    expired: db.prepare('SELECT id FROM endpoints WHERE deadline_ms <= ? LIMIT ?'),
    setDeadline: db.prepare('UPDATE endpoints SET deadline_ms = ? WHERE id = ?'),
    extend: db.prepare('UPDATE endpoints SET record = ?, deadline_ms = ? WHERE id = ?'),
    setResponse: db.prepare("UPDATE endpoints SET response = ?, rule_counts = '{}' WHERE id = ? AND deadline_ms > ?"),
    setRuleCounts: db.prepare('UPDATE endpoints SET rule_counts = ? WHERE id = ?'),
    request: db.prepare('SELECT message, cost FROM requests WHERE endpoint_id = ? AND seq = ?'),
    setMessage: db.prepare('UPDATE requests SET message = ?, cost = ? WHERE endpoint_id = ? AND seq = ?'),
    setLastSeq: db.prepare('UPDATE endpoints SET last_seq = ? WHERE id = ?'),
    setCleared: db.prepare('UPDATE endpoints SET cleared_seq = ? WHERE id = ?'),
    insertRequest: db.prepare('INSERT INTO requests (endpoint_id, seq, cost, message) VALUES (?, ?, ?, ?)'),
    deleteRequest: db.prepare('DELETE FROM requests WHERE id = ?'),
    deleteRequestOf: db.prepare('DELETE FROM requests WHERE endpoint_id = ? AND seq = ? RETURNING cost'),
    deleteRequestsOf: db.prepare('DELETE FROM requests WHERE endpoint_id = ?'),
    heldOf: db.prepare(
      'SELECT id, endpoint_id AS endpointId, seq, cost AS costBytes FROM requests WHERE endpoint_id = ? ORDER BY seq',
    ),
    // Stored order is age order: ids only grow (AUTOINCREMENT).
    heldAnywhere: db.prepare('SELECT id, endpoint_id AS endpointId, seq, cost AS costBytes FROM requests ORDER BY id'),
    requestsAfter: db.prepare(
      'SELECT seq, message, forwarded FROM requests WHERE endpoint_id = ? AND seq > ? ORDER BY seq',
    ),
    setForwarded: db.prepare('UPDATE requests SET forwarded = ?, cost = ? WHERE endpoint_id = ? AND seq = ?'),
    requestCost: db.prepare('SELECT message, forwarded, cost FROM requests WHERE endpoint_id = ? AND seq = ?'),
    heldByEndpoint: db.prepare(
      'SELECT endpoint_id, COUNT(*) AS count, SUM(cost) AS bytes FROM requests GROUP BY endpoint_id',
    ),
  };
}

/**
 * Rows for the rulebook to read: the query runs only if the rulebook starts reading, and its
 * cursor is closed once it stops (an open one keeps the connection busy for any other statement).
 */
function cursor(open: () => IterableIterator<unknown>): Iterable<HeldRow> {
  return { [Symbol.iterator]: () => open() as Iterator<HeldRow> };
}

/** SQLITE_FULL (or the disk's ENOSPC under it), as better-sqlite3 reports it inside StoreUnavailableError. */
function isDiskFull(error: unknown): boolean {
  const cause = error instanceof StoreUnavailableError ? error.cause : error;
  return (
    (cause as { code?: unknown } | null)?.code === 'SQLITE_FULL' ||
    /disk is full|no space/i.test(String((cause as Error | null)?.message))
  );
}
