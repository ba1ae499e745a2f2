import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Bus } from '../../src/bus/bus.js';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { createRedisBus } from '../../src/redis/bus.js';
import {
  evictAcrossEndpoints,
  hasGap,
  nextSeq,
  storedCost,
  STORED_REQUEST_OVERHEAD_BYTES,
  trimEndpoint,
  type HeldAnywhere,
} from '../../src/log/rulebook.js';
import { ONLY_DEFAULT } from '../../src/shared/answer-rules.js';
import { DEFAULT_RESPONSE } from '../../src/shared/schemas/response-config.js';
import { createMemoryStore } from '../../src/one-process/memory-store.js';
import { createRedisStore } from '../../src/redis/store.js';
import { openDatabase } from '../../src/one-process/sqlite-database.js';
import { createSqliteStore } from '../../src/one-process/sqlite-store.js';
import { type NewEntry, type EndpointKind, type Store, type StoreLimits } from '../../src/store/store.js';
import { elementLength, encodeRecord } from '../../src/store/stored-request.js';
import { connectRedis, dropPrefix, testPrefix } from '../helpers/redis.js';
import { logRulesCases, type EndpointName, type LogRulesCase } from './log-rules.cases.js';

const ANSWER = '{"status":200,"delayMs":0,"by":"default"}';
const ENDPOINTS: readonly EndpointName[] = ['a', 'b'];

/** A draft whose request, numbered `seq`, costs `bytes` against the budgets. */
function entryCosting(bytes: number, seq: number): NewEntry {
  const pad = bytes - STORED_REQUEST_OVERHEAD_BYTES - elementLength(ANSWER, encodeRecord('{}', new Uint8Array()));
  if (pad < 0) throw new Error(`a request cannot cost as little as ${bytes} bytes (seq ${seq})`);
  return { record: encodeRecord('{}', Buffer.alloc(pad, 'x')), choices: ONLY_DEFAULT, answers: [ANSWER] };
}

/** A `forwarded` message for request `seq` of exactly `bytes` bytes. */
function forwardedOf(bytes: number, seq: number): string {
  const pad = bytes - `{"type":"forwarded","seq":${seq},"pad":""}`.length;
  if (pad < 0) throw new Error(`a forward result cannot be as small as ${bytes} bytes`);
  return `{"type":"forwarded","seq":${seq},"pad":"${'y'.repeat(pad)}"}`;
}

/** What a case ends with, as compared; `evicted` grouped by endpoint where the order between endpoints is not a rule. */
interface Outcome {
  stored: Record<EndpointName, number[]>;
  evicted: Array<[EndpointName, number]> | Record<EndpointName, number[]>;
  storedBytes: number;
  gaps: Array<[EndpointName, number, boolean]>;
}

const byEndpoint = (evicted: Array<[EndpointName, number]>): Record<EndpointName, number[]> => ({
  a: evicted.filter(([id]) => id === 'a').map(([, seq]) => seq),
  b: evicted.filter(([id]) => id === 'b').map(([, seq]) => seq),
});

function expectedOf(rules: LogRulesCase, evictedInOrder: boolean): Outcome {
  const { stored, evicted, storedBytes, gaps = [] } = rules.expected;
  return {
    stored: { a: stored.a ?? [], b: stored.b ?? [] },
    evicted: evictedInOrder ? evicted : byEndpoint(evicted),
    storedBytes,
    gaps,
  };
}

/**
 * The rules alone: an endpoint is a list of (seq, cost), the store an age order, and every
 * decision is the rulebook's. What a backend must do, with nothing of any backend in it.
 */
function simulate(rules: LogRulesCase): Outcome {
  interface Held extends HeldAnywhere {
    endpointId: EndpointName;
    length: number;
  }
  const logs = new Map(ENDPOINTS.map((id) => [id, { lastSeq: 0, clearedSeq: 0, held: [] as Held[] }]));
  const logOf = (id: EndpointName) => logs.get(id) as { lastSeq: number; clearedSeq: number; held: Held[] };
  let aged: Held[] = [];
  const evicted: Array<[EndpointName, number]> = [];
  const bytesOf = (held: Held[]) => held.reduce((sum, request) => sum + request.costBytes, 0);
  const remove = (request: Held) => {
    const log = logOf(request.endpointId);
    log.held = log.held.filter((held) => held !== request);
    aged = aged.filter((held) => held !== request);
  };
  const keepBudgets = (id: EndpointName) => {
    const { held } = logOf(id);
    const trim = trimEndpoint(held, { count: held.length, bytes: bytesOf(held) }, rules.limits);
    trim.dropped.forEach(remove);
    if (trim.evictedThroughSeq !== undefined) evicted.push([id, trim.evictedThroughSeq]);
    const eviction = evictAcrossEndpoints(aged, bytesOf(aged), rules.limits.maxStoredBytes);
    eviction.dropped.forEach(remove);
    for (const [endpointId, throughSeq] of eviction.evictedThrough)
      evicted.push([endpointId as EndpointName, throughSeq]);
  };

  for (const step of rules.steps) {
    if ('append' in step) {
      const log = logOf(step.append);
      const seq = nextSeq(log.lastSeq);
      log.lastSeq = seq;
      const length = elementLength(ANSWER, entryCosting(step.bytes, seq).record);
      const request: Held = { endpointId: step.append, seq, length, costBytes: storedCost(length, undefined) };
      log.held.push(request);
      aged.push(request);
      keepBudgets(step.append);
    } else if ('forward' in step) {
      const request = logOf(step.forward).held.find((held) => held.seq === step.seq);
      if (!request) continue;
      request.costBytes = storedCost(request.length, forwardedOf(step.bytes, step.seq));
      keepBudgets(step.forward);
    } else if ('delete' in step) {
      const request = logOf(step.delete).held.find((held) => held.seq === step.seq);
      if (request) remove(request);
    } else {
      const log = logOf(step.clear);
      log.held.forEach(remove);
      log.clearedSeq = log.lastSeq;
    }
  }
  const gaps = (rules.expected.gaps ?? []).map(([id, afterSeq]): [EndpointName, number, boolean] => {
    const log = logOf(id);
    return [
      id,
      afterSeq,
      hasGap(afterSeq, {
        firstSeq: log.held.find((held) => held.seq > afterSeq)?.seq,
        lastSeq: log.lastSeq,
        clearedSeq: log.clearedSeq,
      }),
    ];
  });
  return {
    stored: { a: logOf('a').held.map((held) => held.seq), b: logOf('b').held.map((held) => held.seq) },
    evicted,
    storedBytes: bytesOf(aged),
    gaps,
  };
}

describe('log rules: the rulebook alone', () => {
  it.each(logRulesCases)('$name', (rules) => {
    expect(simulate(rules)).toEqual(expectedOf(rules, true));
  });
});

/** A backend as store.contract.test.ts builds it, with what it takes to put it away. */
interface Backend {
  store: Store;
  bus: Bus;
  kind: EndpointKind;
  close(): Promise<void>;
}
type LogLimits = LogRulesCase['limits'];
const storeLimits = (limits: LogLimits): StoreLimits => ({ ...limits, maxResponseConfigBytes: 1024 * 1024 });

const backends: Array<[string, (limits: LogLimits) => Backend]> = [
  [
    'memory',
    (limits) => {
      const bus = createMemoryBus();
      return {
        store: createMemoryStore({ ...storeLimits(limits), bus }),
        bus,
        kind: 'live',
        close: async () => undefined,
      };
    },
  ],
  [
    'sqlite',
    (limits) => {
      const dir = mkdtempSync(join(tmpdir(), 'hookwatch-log-rules-'));
      const db = openDatabase(dir);
      const bus = createMemoryBus();
      // One process keeps kept endpoints here, under the disk budget.
      const store = createSqliteStore({ ...storeLimits(limits), maxDiskBytes: limits.maxStoredBytes, db, bus });
      return {
        store,
        bus,
        kind: 'kept',
        close: async () => {
          db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    'redis',
    (limits) => {
      const prefix = testPrefix();
      const [commands, subscriber] = [connectRedis(), connectRedis()];
      return {
        store: createRedisStore({ ...storeLimits(limits), redis: commands, prefix, commandTimeoutMs: 2000 }),
        bus: createRedisBus({ publisher: commands, subscriber, prefix }),
        kind: 'live',
        close: async () => {
          await dropPrefix(commands, prefix);
          await Promise.all([commands.quit(), subscriber.quit()]);
        },
      };
    },
  ],
];

/**
 * Cases a backend runs against the rules and loses, by backend and case name, each with the
 * difference; their runs are marked to fail until the backend is mended. None now.
 */
const KNOWN_DIFFERENCES: Record<string, Record<string, string>> = {};

const HOUR = 60 * 60 * 1000;

/** Runs a case through the Store interface, as the receiver and the endpoints API would. */
/** Runs the case's steps; the outcome is read by what it returns (Redis evicts across endpoints in a step of its own, just after). */
async function runThrough(backend: Backend, rules: LogRulesCase): Promise<() => Promise<Outcome>> {
  const { store, bus, kind } = backend;
  const evicted: Array<[EndpointName, number]> = [];
  const fenced = new Set<string>();
  bus.onMessage((id, message) => {
    if (message.seq !== undefined) return;
    const data = JSON.parse(String(message.data)) as { type: string; throughSeq?: number };
    if (data.type === 'evicted') evicted.push([id as EndpointName, data.throughSeq as number]);
    if (data.type === 'watchers') fenced.add(id);
  });
  for (const id of ENDPOINTS) {
    const endpoint = {
      id,
      kind,
      keyHash: 'ab'.repeat(32),
      createdAt: '2026-01-01T00:00:00.000Z',
      response: DEFAULT_RESPONSE,
    };
    expect(await store.createEndpoint(endpoint, { maxEndpoints: 10, deadlineMs: Date.now() + HOUR })).toBe('created');
    await bus.subscribe(id);
  }
  const lastSeqOf = async (id: EndpointName) => (await store.readLog(id, Number.MAX_SAFE_INTEGER))?.lastSeq ?? 0;

  for (const step of rules.steps) {
    if ('append' in step) {
      const seq = nextSeq(await lastSeqOf(step.append));
      const appended = await store.appendRequest(step.append, kind, () => entryCosting(step.bytes, seq), Date.now());
      // Sized for the seq the rules give it: another would cost another number of bytes.
      expect(appended?.seq, `the seq given on ${step.append}`).toBe(seq);
    } else if ('forward' in step) {
      await store.setForwarded(step.forward, step.seq, forwardedOf(step.bytes, step.seq));
    } else if ('delete' in step) {
      await store.deleteRequest(step.delete, step.seq);
    } else {
      await store.clearRequests(step.clear);
    }
  }
  // Each endpoint's announcements arrive in order: once a `watchers` announced last has, every `evicted` before it has.
  for (const id of ENDPOINTS) await store.countWatchers(id, 'log-rules', 0);
  await expect.poll(() => fenced.size).toBe(ENDPOINTS.length);

  return async () => {
    const stored = { a: [] as number[], b: [] as number[] };
    for (const id of ENDPOINTS) stored[id] = (await store.readLog(id, 0))?.requests.map((request) => request.seq) ?? [];
    const gaps: Array<[EndpointName, number, boolean]> = [];
    for (const [id, afterSeq] of rules.expected.gaps ?? []) {
      const log = await store.readLog(id, afterSeq);
      if (log)
        gaps.push([
          id,
          afterSeq,
          hasGap(afterSeq, { firstSeq: log.requests[0]?.seq, lastSeq: log.lastSeq, clearedSeq: log.clearedSeq }),
        ]);
    }
    return { stored, evicted: byEndpoint(evicted), storedBytes: (await store.stats()).storedBytes, gaps };
  };
}

describe.each(backends)('log rules through the Store: %s', (name, makeBackend) => {
  for (const rules of logRulesCases) {
    const difference = KNOWN_DIFFERENCES[name]?.[rules.name];
    (difference === undefined ? it : it.fails)(rules.name, async () => {
      const backend = makeBackend(rules.limits);
      try {
        const outcome = await runThrough(backend, rules);
        await expect.poll(outcome, { timeout: 3000 }).toEqual(expectedOf(rules, false));
      } finally {
        await backend.close();
      }
    });
  }
});
