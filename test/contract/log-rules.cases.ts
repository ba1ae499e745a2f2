/**
 * The request log's rules as one table of cases (src/log/rulebook.ts). log-rules.test.ts runs
 * each against the rulebook alone and through the Store interface on every backend, the Redis
 * scripts included: a backend that disagrees with a row breaks the rule the row names.
 *
 * Sizes are what a request counts against the budgets (`storedCost`): `append` stores a request
 * costing `bytes` (its message plus the overhead), `forward` sets a forward result of `bytes`
 * on stored request `seq` (replacing the one before; nothing happens when it is not stored).
 */

export type EndpointName = 'a' | 'b';

export type LogStep =
  | { append: EndpointName; bytes: number }
  | { forward: EndpointName; seq: number; bytes: number }
  | { delete: EndpointName; seq: number }
  | { clear: EndpointName };

export interface LogRulesCase {
  name: string;
  limits: { requestsPerEndpoint: number; maxStoredBytesPerEndpoint: number; maxStoredBytes: number };
  steps: LogStep[];
  expected: {
    /** Each endpoint's stored seqs, oldest first (an endpoint left out stores none). */
    stored: Partial<Record<EndpointName, number[]>>;
    /**
     * The `evicted` announcements (endpoint, throughSeq) in the order the rules make them. Each
     * endpoint's watchers get its own in this order; between two endpoints the order is not a
     * rule (each has its own channel).
     */
    evicted: Array<[EndpointName, number]>;
    storedBytes: number;
    /** A reader holding everything through `afterSeq` resumes: whether it has missed some (`hasGap`). */
    gaps?: Array<[EndpointName, number, boolean]>;
  };
}

/** Budgets too large to matter in a case about another one. */
const ROOMY = { requestsPerEndpoint: 50, maxStoredBytesPerEndpoint: 100_000, maxStoredBytes: 1_000_000 };

export const logRulesCases: LogRulesCase[] = [
  {
    name: 'numbers requests from 1 and keeps all of them within every budget',
    limits: ROOMY,
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
    ],
    expected: {
      stored: { a: [1, 2, 3] },
      evicted: [],
      storedBytes: 3000,
      gaps: [
        ['a', 0, false],
        ['a', 3, false],
      ],
    },
  },
  {
    name: 'past REQUESTS_PER_ENDPOINT the oldest go, unannounced',
    limits: { ...ROOMY, requestsPerEndpoint: 3 },
    steps: [1, 2, 3, 4, 5].map(() => ({ append: 'a', bytes: 1000 }) as const),
    expected: {
      stored: { a: [3, 4, 5] },
      evicted: [],
      storedBytes: 3000,
      gaps: [
        ['a', 0, true],
        ['a', 2, false],
      ],
    },
  },
  {
    name: "past the endpoint's byte budget its oldest go, each trim announced through the last seq it took",
    limits: { ...ROOMY, maxStoredBytesPerEndpoint: 3500 },
    steps: [1, 2, 3, 4, 5].map(() => ({ append: 'a', bytes: 1000 }) as const),
    expected: {
      stored: { a: [3, 4, 5] },
      evicted: [
        ['a', 1],
        ['a', 2],
      ],
      storedBytes: 3000,
      gaps: [
        ['a', 0, true],
        ['a', 1, true],
        ['a', 2, false],
      ],
    },
  },
  {
    name: 'one large request takes several of the oldest at once: one announcement, through the last',
    limits: { ...ROOMY, maxStoredBytesPerEndpoint: 3500 },
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 3000 },
    ],
    expected: { stored: { a: [4] }, evicted: [['a', 3]], storedBytes: 3000 },
  },
  {
    name: "the endpoint's byte budget never takes its last request, however large",
    limits: { ...ROOMY, maxStoredBytesPerEndpoint: 2000 },
    steps: [
      { append: 'a', bytes: 500 },
      { append: 'a', bytes: 5000 },
      { append: 'a', bytes: 500 },
    ],
    expected: {
      stored: { a: [3] },
      evicted: [
        ['a', 1],
        ['a', 2],
      ],
      storedBytes: 500,
    },
  },
  {
    name: 'the count trims first, and what it takes is not evicted, even past the byte budget',
    limits: { ...ROOMY, requestsPerEndpoint: 2, maxStoredBytesPerEndpoint: 2500 },
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 2000 },
    ],
    expected: { stored: { a: [4] }, evicted: [['a', 3]], storedBytes: 2000 },
  },
  {
    name: "past the store's byte budget the oldest requests anywhere go first",
    limits: { ...ROOMY, maxStoredBytesPerEndpoint: 5000, maxStoredBytes: 4500 },
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'b', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { append: 'b', bytes: 1000 },
      { append: 'b', bytes: 1000 },
      { append: 'b', bytes: 1000 },
    ],
    expected: {
      stored: { a: [2], b: [2, 3, 4] },
      evicted: [
        ['a', 1],
        ['b', 1],
      ],
      storedBytes: 4000,
    },
  },
  {
    name: "the store's budget takes an endpoint's last request too",
    limits: { ...ROOMY, maxStoredBytesPerEndpoint: 3000, maxStoredBytes: 3000 },
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'b', bytes: 1500 },
      { append: 'b', bytes: 1500 },
    ],
    expected: {
      stored: { a: [], b: [1, 2] },
      evicted: [['a', 1]],
      storedBytes: 3000,
      gaps: [
        ['a', 0, true],
        ['a', 1, false],
      ],
    },
  },
  {
    name: "one step past the store's budget takes from several endpoints: each told once, through its last seq taken",
    limits: { ...ROOMY, maxStoredBytes: 5000 },
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'b', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { append: 'b', bytes: 1000 },
      { append: 'a', bytes: 4000 },
    ],
    expected: {
      stored: { a: [3], b: [2] },
      evicted: [
        ['a', 2],
        ['b', 1],
      ],
      storedBytes: 5000,
    },
  },
  {
    name: "the endpoint's trim and the store's eviction in one step are announced apart, the trim first",
    limits: { ...ROOMY, maxStoredBytesPerEndpoint: 3000, maxStoredBytes: 3500 },
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { append: 'b', bytes: 1500 },
      { append: 'a', bytes: 1500 },
    ],
    expected: {
      stored: { a: [3], b: [1] },
      evicted: [
        ['a', 1],
        ['a', 2],
      ],
      storedBytes: 3000,
    },
  },
  {
    name: "a forward result that grows a request past the endpoint's budget takes the oldest, not the grown one",
    limits: { ...ROOMY, maxStoredBytesPerEndpoint: 3000 },
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 800 },
      { forward: 'a', seq: 3, bytes: 500 },
    ],
    expected: { stored: { a: [2, 3] }, evicted: [['a', 1]], storedBytes: 2300 },
  },
  {
    name: 'a forward result on the oldest request can take that very request: the budget goes by age',
    limits: { ...ROOMY, maxStoredBytesPerEndpoint: 3000 },
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { forward: 'a', seq: 1, bytes: 1500 },
    ],
    expected: { stored: { a: [2] }, evicted: [['a', 1]], storedBytes: 1000 },
  },
  {
    name: 'a forward result replaces the one before it: the bytes follow the latest',
    limits: ROOMY,
    steps: [
      { append: 'a', bytes: 1000 },
      { forward: 'a', seq: 1, bytes: 600 },
      { forward: 'a', seq: 1, bytes: 200 },
    ],
    expected: { stored: { a: [1] }, evicted: [], storedBytes: 1200 },
  },
  {
    name: "a forward result past the store's budget evicts the oldest request anywhere",
    limits: { ...ROOMY, maxStoredBytesPerEndpoint: 5000, maxStoredBytes: 4000 },
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'b', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { forward: 'b', seq: 1, bytes: 1500 },
    ],
    expected: { stored: { a: [2], b: [1] }, evicted: [['a', 1]], storedBytes: 3500 },
  },
  {
    name: 'a forward result for a request no longer stored is not kept',
    limits: { ...ROOMY, requestsPerEndpoint: 1 },
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { forward: 'a', seq: 1, bytes: 500 },
    ],
    expected: { stored: { a: [2] }, evicted: [], storedBytes: 1000 },
  },
  {
    name: 'a delete frees its bytes and leaves a gap; its seq is never given again',
    limits: ROOMY,
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { delete: 'a', seq: 2 },
      { delete: 'a', seq: 3 },
      { append: 'a', bytes: 1000 },
    ],
    expected: {
      stored: { a: [1, 4] },
      evicted: [],
      storedBytes: 2000,
      gaps: [
        ['a', 0, false],
        ['a', 1, true],
        ['a', 4, false],
      ],
    },
  },
  {
    name: 'a delete makes room: a later request stays within the budget without evicting',
    limits: { ...ROOMY, maxStoredBytesPerEndpoint: 3000 },
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { delete: 'a', seq: 1 },
      { append: 'a', bytes: 1000 },
    ],
    expected: { stored: { a: [2, 3, 4] }, evicted: [], storedBytes: 3000 },
  },
  {
    name: "a clear frees all of an endpoint's bytes, not another's, and numbering goes on after it",
    limits: ROOMY,
    steps: [
      { append: 'a', bytes: 1000 },
      { append: 'a', bytes: 1000 },
      { append: 'b', bytes: 1000 },
      { clear: 'a' },
      { append: 'a', bytes: 1000 },
    ],
    expected: {
      stored: { a: [3], b: [1] },
      evicted: [],
      storedBytes: 2000,
      gaps: [
        ['a', 0, false],
        ['a', 1, false],
        ['b', 0, false],
      ],
    },
  },
  {
    name: 'what a clear covers is not a gap, requests trimmed before it included; clearing again changes nothing',
    limits: { ...ROOMY, requestsPerEndpoint: 1 },
    steps: [{ append: 'a', bytes: 1000 }, { append: 'a', bytes: 1000 }, { clear: 'a' }, { clear: 'a' }],
    expected: {
      stored: { a: [] },
      evicted: [],
      storedBytes: 0,
      gaps: [
        ['a', 0, false],
        ['a', 2, false],
      ],
    },
  },
];
