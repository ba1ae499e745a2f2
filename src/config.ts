import { parseArgs } from 'node:util';
import { z } from 'zod';
import { parseAccessTokens } from './access/access-tokens.js';
import { maxRecordBytes } from './capture/record-bounds.js';

const KIB = 1024;
const MIB = 1024 * KIB;

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** `host:port,host:port`: Redis sentinels or cluster nodes. */
const hostPorts = z.string().transform((value, ctx): Array<{ host: string; port: number }> => {
  const nodes = value.split(',').map((part) => part.trim()).filter((part) => part !== '');
  const parsed = nodes.map((node) => /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(node));
  if (nodes.length === 0 || parsed.some((match) => match === null || Number(match[2]) > 65535)) {
    ctx.addIssue({ code: 'custom', message: 'must be host:port pairs separated by commas, e.g. 10.0.0.1:26379,10.0.0.2:26379' });
    return z.NEVER;
  }
  return parsed.map((match) => ({ host: (match as RegExpExecArray)[1]!.replace(/^\[|\]$/g, ''), port: Number((match as RegExpExecArray)[2]) }));
});

const MIN_HEADER_BYTES = KIB;
/** The fixed part of every record (an empty body, the smallest head): no budget can be below it. */
const SMALLEST_RECORD = maxRecordBytes({ maxBodyBytes: 0, maxHeaderBytes: MIN_HEADER_BYTES });

/**
 * `false` (default), `true` (trust every hop) or a comma-separated list of proxy
 * addresses/CIDRs, handed to Fastify's `trustProxy`.
 */
const trustProxy = z.string().transform((value, ctx): boolean | string[] => {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === 'false' || trimmed === '0') return false;
  if (trimmed === 'true' || trimmed === '1') return true;
  const list = trimmed.split(',').map((item) => item.trim()).filter(Boolean);
  if (list.some((item) => !/^[0-9a-fA-F.:/]+$/.test(item))) {
    ctx.addIssue({ code: 'custom', message: 'expected true, false or a comma-separated list of IP addresses/CIDRs' });
    return z.NEVER;
  }
  return list;
});

/** `true`/`false` (also `1`/`0`, `yes`/`no`). */
const flag = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'expected true or false' })])
  .transform((value) => value === true || value === 'true' || value === '1' || value === 'yes');

const publicUrl = z
  .string()
  .url()
  .refine((value) => /^https?:\/\//.test(value), 'must start with http:// or https://')
  .transform((value) => value.replace(/\/+$/, ''));

/** Where the service listens and how it is reached. */
const listening = {
  host: { env: 'HOST', schema: z.string().min(1).default('0.0.0.0'), doc: 'Address to listen on.' },
  port: { env: 'PORT', schema: integer(0, 65535).default(8080), doc: 'TCP port to listen on (0 picks a free one).' },
  publicUrl: {
    env: 'PUBLIC_URL',
    schema: publicUrl.optional(),
    doc: 'Base URL senders use, e.g. `https://hooks.example.com`. Unset: taken from each request (Host, and X-Forwarded-* only when TRUST_PROXY is set).',
  },
  trustProxy: {
    env: 'TRUST_PROXY',
    schema: trustProxy.default(false),
    doc: '`false`, `true`, or a comma-separated list of proxy addresses/CIDRs whose X-Forwarded-* headers are believed.',
  },
  tlsCertFile: { env: 'TLS_CERT_FILE', schema: z.string().min(1).optional(), doc: 'PEM certificate (chain) file: serve HTTPS directly. Needs TLS_KEY_FILE.' },
  tlsKeyFile: { env: 'TLS_KEY_FILE', schema: z.string().min(1).optional(), doc: 'PEM private key file for TLS_CERT_FILE.' },
  allowedOrigins: {
    env: 'ALLOWED_ORIGINS',
    schema: z
      .string()
      .transform((value) => value.split(',').map((item) => item.trim().replace(/\/+$/, '')).filter(Boolean))
      .pipe(z.array(z.string().url()))
      .default([]),
    doc: 'Extra browser origins allowed to open live sockets (comma-separated). The page\'s own origin (and PUBLIC_URL\'s) is always allowed; clients that send no Origin (curl, scripts) are too.',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    doc: 'pino log level. Per-request lines are logged at `debug`.',
  },
} as const;

/**
 * Who may create, watch and configure endpoints (product decision 20, docs/deploy.md#access).
 * Receiver URLs stay public in every mode.
 */
const access = {
  accessMode: {
    env: 'ACCESS_MODE',
    schema: z.enum(['open', 'token', 'proxy'], { error: 'expected open, token or proxy' }).default('open'),
    doc: '`open`: anyone may create and watch. `token`: creating, watching, configuring and the endpoints API need a token from ACCESS_TOKENS or ACCESS_TOKENS_FILE. `proxy`: the user is ACCESS_USER_HEADER, set by an authenticating proxy at a TRUST_PROXY address.',
  },
  accessTokens: {
    env: 'ACCESS_TOKENS',
    schema: z.string().transform((value, ctx) => {
      const tokens = parseAccessTokens(value);
      if (typeof tokens !== 'string' && tokens.length > 0) return tokens;
      ctx.addIssue({ code: 'custom', message: typeof tokens === 'string' ? tokens : 'no tokens: expected name:token or token entries, separated by commas' });
      return z.NEVER;
    }).optional(),
    secret: true,
    doc: 'Access tokens for ACCESS_MODE=token, comma-separated, each `name:token` or `token` (16-512 of A-Z a-z 0-9 . _ ~ + / = -); the name is the user in logs. Never logged.',
  },
  accessTokensFile: {
    env: 'ACCESS_TOKENS_FILE',
    schema: z.string().min(1).optional(),
    doc: 'A file of access tokens, one `name:token` or `token` a line (`#` comments), read at start and again on SIGHUP (with ACCESS_TOKENS, both count).',
  },
  accessUserHeader: {
    env: 'ACCESS_USER_HEADER',
    schema: z.string().regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}$/, 'expected a header name').transform((name) => name.toLowerCase()).default('x-forwarded-email'),
    doc: 'ACCESS_MODE=proxy: the header the authenticating proxy puts the signed-in user in (oauth2-proxy: X-Forwarded-Email; Authelia: Remote-Email; Cloudflare Access: Cf-Access-Authenticated-User-Email). Believed only from TRUST_PROXY addresses.',
  },
  keptCreatesPerUser: {
    env: 'KEPT_CREATES_PER_USER',
    schema: integer(0, 100_000_000).default(30),
    doc: 'For a signed-in user (token or proxy mode), instead of KEPT_CREATES_PER_ADDRESS: endpoints the user may create per RATE_LIMIT_WINDOW_MS, from any address; past it 429 RATE_LIMITED. 0 turns it off.',
  },
  maxKeptPerUser: {
    env: 'MAX_KEPT_PER_USER',
    // A user's endpoints are counted from their list, which is at most 500 long (store.ts).
    schema: integer(1, 250).default(100),
    doc: 'Kept endpoints one signed-in user may hold at once (token or proxy mode); past it creating another gets 429 TOO_MANY_KEPT.',
  },
} as const;

/** What one request may be: its size, its head, its timing. */
const capture = {
  maxBodyBytes: {
    env: 'MAX_BODY_BYTES',
    schema: integer(0, 64 * MIB).default(MIB),
    doc: 'Stored body cap per request (bytes). Longer bodies are stored cut to this size and flagged `truncated`.',
  },
  readLimitBytes: {
    env: 'READ_LIMIT_BYTES',
    schema: integer(1, 1024 * MIB).default(10 * MIB),
    doc: 'Hard read limit per request (bytes). Past it reading stops, the sender gets 413, the request is still captured (truncated).',
  },
  maxHeaderBytes: {
    env: 'MAX_HEADER_BYTES',
    schema: integer(MIN_HEADER_BYTES, 1024 * KIB).default(16 * KIB),
    doc: 'Largest request head (request line and headers) accepted; past it 431.',
  },
  maxJsonDepth: {
    env: 'MAX_JSON_DEPTH',
    schema: integer(1, 10_000).default(64),
    doc: 'Deepest nesting for which a body is flagged as JSON (`isJson`) and shown as a tree; deeper bodies are still captured, shown as raw text.',
  },
  headersTimeoutMs: {
    env: 'HEADERS_TIMEOUT_MS',
    schema: integer(1000, 60 * 60 * 1000).default(10_000),
    doc: 'Time a new connection has to send a whole request head (line and headers); past it 408 and closed.',
  },
  requestTimeoutMs: {
    env: 'REQUEST_TIMEOUT_MS',
    schema: integer(1000, 60 * 60 * 1000).default(60_000),
    doc: 'Time a sender has to deliver a whole request, headers and body (stops slowloris senders); past it 408.',
  },
  idleTimeoutMs: {
    env: 'IDLE_TIMEOUT_MS',
    schema: integer(1000, 60 * 60 * 1000).default(30_000),
    doc: 'A keep-alive connection with no request for this long is closed.',
  },
  maxReadingBytes: {
    env: 'MAX_READING_BYTES',
    schema: integer(MIB, 64 * 1024 * MIB).default(64 * MIB),
    doc: 'Body bytes held by requests still being read, all together; past it new bodies get 503 AT_CAPACITY with Retry-After.',
  },
} as const;

/** What the store and the API may hold in memory. */
const storage = {
  dataDir: {
    env: 'DATA_DIR',
    schema: z.string().min(1).default('./data'),
    doc: 'Where kept endpoints and their requests live without Redis: an SQLite file in this folder, created when missing. `none` keeps them in memory only (gone on restart). Unused with Redis.',
  },
  maxDiskBytes: {
    env: 'MAX_DISK_BYTES',
    schema: integer(MIB, 1024 * 1024 * MIB).default(1024 * MIB),
    doc: 'Bytes of stored requests the embedded store keeps on disk (counted as for MAX_STORED_BYTES); past it the oldest kept requests go first and their watchers get `evicted`.',
  },
  requestsPerEndpoint: {
    env: 'REQUESTS_PER_ENDPOINT',
    schema: integer(1, 1000).default(50),
    doc: 'Requests kept per endpoint; the oldest is dropped first.',
  },
  maxStoredBytes: {
    env: 'MAX_STORED_BYTES',
    schema: integer(MIB, 64 * 1024 * MIB).default(256 * MIB),
    doc: 'Bytes of stored requests the whole process holds, counted on the stored records. When full, the oldest stored requests go first, across endpoints; watchers are told (`evicted`).',
  },
  maxStoredBytesPerEndpoint: {
    env: 'MAX_STORED_BYTES_PER_ENDPOINT',
    schema: integer(SMALLEST_RECORD, 64 * 1024 * MIB).default(32 * MIB),
    doc: 'Bytes of stored requests one endpoint holds; past it its oldest requests go first.',
  },
  maxResponseConfigBytes: {
    env: 'MAX_RESPONSE_CONFIG_BYTES',
    schema: integer(MIB, 64 * 1024 * MIB).default(32 * MIB),
    doc: 'What the response configurations held in this process may cost together (twice their JSON, plus 1 KiB each; the shared default costs nothing); past it setting one gets 503 AT_CAPACITY. Unused with Redis, which holds them.',
  },
  maxApiAnswerBytes: {
    env: 'MAX_API_ANSWER_BYTES',
    schema: integer(MIB, 64 * 1024 * MIB).default(32 * MIB),
    doc: 'Bytes of endpoints-API answers written but not yet read by their clients, all together; past it a poll gets 503 AT_CAPACITY.',
  },
  maxApiAnswerBytesPerAddress: {
    env: 'MAX_API_ANSWER_BYTES_PER_ADDRESS',
    schema: integer(MIB, 64 * 1024 * MIB).default(16 * MIB),
    doc: 'The same, per client address; past it a poll gets 429 RATE_LIMITED with Retry-After.',
  },
  cleanupIntervalMs: {
    env: 'CLEANUP_INTERVAL_MS',
    schema: integer(1000, 24 * 60 * 60 * 1000).default(60_000),
    doc: 'How often expired endpoints and their requests are removed. Until then they are already gone for every request and socket.',
  },
} as const;

/** How many endpoints, and how long they live. */
const endpoints = {
  maxEndpoints: { env: 'MAX_ENDPOINTS', schema: integer(1, 10_000_000).default(10_000), doc: 'Live endpoints at once; past it creation fails with 503 AT_CAPACITY.' },
  graceMs: {
    env: 'GRACE_MS',
    schema: integer(0, 24 * 60 * 60 * 1000).default(30_000),
    doc: 'How long a live endpoint outlives its last watcher (ms), so a reload or a network blip does not lose it. 0 purges at once.',
  },
  leaseMs: {
    env: 'LEASE_MS',
    schema: integer(1000, 10 * 60 * 1000).default(15_000),
    doc: 'How long an instance\'s hold on a watched endpoint lasts without renewal (renewed every third of it). An instance that dies stops renewing: its endpoints live this plus GRACE_MS, time for their watchers to move to another instance.',
  },
  keptTtlMs: {
    env: 'KEPT_TTL_MS',
    schema: integer(1000, 30 * 24 * 60 * 60 * 1000).default(2 * 60 * 60 * 1000),
    doc: 'How long a kept endpoint lives from its creation, watched or not, unless its creator picks another lifetime (ms).',
  },
  keptMaxTtlMs: {
    env: 'KEPT_MAX_TTL_MS',
    schema: integer(1000, 365 * 24 * 60 * 60 * 1000).default(7 * 24 * 60 * 60 * 1000),
    doc: 'The longest lifetime a kept endpoint may be given at creation or by an extend (ms); past it 400 INVALID_REQUEST.',
  },
  namedEndpoints: {
    env: 'NAMED_ENDPOINTS',
    schema: flag.default(true),
    doc: '`false` refuses kept endpoints with a chosen `name` (400 INVALID_REQUEST).',
  },
  allowUnredacted: {
    env: 'ALLOW_UNREDACTED',
    schema: flag.default(true),
    doc: '`false` refuses kept endpoints created with `redact: false` (400 INVALID_REQUEST): every secret is stored redacted.',
  },
  keptMaxBodyBytes: {
    env: 'KEPT_MAX_BODY_BYTES',
    schema: integer(0, 64 * MIB).default(64 * KIB),
    doc: 'Stored body cap per request on kept endpoints (bytes); longer bodies are cut and flagged `truncated`.',
  },
  maxKeptEndpoints: {
    env: 'MAX_KEPT_ENDPOINTS',
    schema: integer(1, 10_000_000).default(10_000),
    doc: 'Kept endpoints at once; past it creation fails with 503 AT_CAPACITY.',
  },
  maxKeptPerAddress: {
    env: 'MAX_KEPT_PER_ADDRESS',
    schema: integer(1, 250).default(20),
    doc: 'Kept endpoints one client address (IPv6 by /64) may hold at once when nobody is signed in; past it creating another gets 429 TOO_MANY_KEPT. Extending keeps an endpoint, it does not add one. A signed-in user has MAX_KEPT_PER_USER instead.',
  },
  keptCreatesPerAddress: {
    env: 'KEPT_CREATES_PER_ADDRESS',
    schema: integer(0, 100_000_000).default(30),
    doc: 'Endpoints one client address may create per RATE_LIMIT_WINDOW_MS: every call to POST /api/endpoints, counted before the body is read (so live and refused creations count too), and every kept endpoint a live socket creates; past it 429 RATE_LIMITED (a socket gets RATE_LIMITED and close 4029). 0 turns it off.',
  },
  redactHeaders: {
    env: 'REDACT_HEADERS',
    schema: z
      .string()
      .transform((value) => value.split(',').map((item) => item.trim().toLowerCase()).filter(Boolean))
      .pipe(z.array(z.string().regex(/^[!#$%&'*+\-.^_`|~0-9a-z]+$/, 'expected header names')))
      .default([]),
    doc: 'More header names (comma-separated) whose values kept endpoints store as `[redacted]`, beyond the built-in list.',
  },
} as const;

/** Several instances sharing Redis. */
const redis = {
  redisUrl: {
    env: 'REDIS_URL',
    schema: z
      .string()
      .refine((value) => /^rediss?:\/\//.test(value), 'must start with redis:// or rediss://')
      .optional(),
    doc: 'Share endpoints, requests, leases, rate limits and fan-out with other instances through this Redis (`redis://host:6379/0`). Unset: everything in this process\'s memory.',
  },
  redisSentinels: {
    env: 'REDIS_SENTINELS',
    schema: hostPorts.optional(),
    doc: 'Sentinels to ask for the Redis primary (`host:port,host:port`), with REDIS_SENTINEL_NAME: the instances follow a failover. Instead of REDIS_URL.',
  },
  redisSentinelName: {
    env: 'REDIS_SENTINEL_NAME',
    schema: z.string().min(1).max(128).default('mymaster'),
    doc: 'The name the sentinels monitor the primary under.',
  },
  redisClusterNodes: {
    env: 'REDIS_CLUSTER_NODES',
    schema: hostPorts.optional(),
    doc: 'Some nodes of a Redis Cluster (`host:port,host:port`): endpoints are spread over its shards, each endpoint\'s keys and channel in one hash slot. Instead of REDIS_URL.',
  },
  redisPartitions: {
    env: 'REDIS_PARTITIONS',
    schema: integer(1, 1024).default(1),
    doc: 'How many parts the Redis keyspace is cut into, each in one hash slot with its share of MAX_STORED_BYTES and MAX_ENDPOINTS (docs/deploy.md). Defaults to 1 on one Redis and 48 on a Cluster; every instance must use the same.',
  },
  redisReplicaWaitMs: {
    env: 'REDIS_REPLICA_WAIT_MS',
    schema: integer(0, 10_000).default(1000),
    doc: 'With Sentinel, how long a capture waits for a replica to have it (`WAIT`) before its sender is answered; 0 does not wait. Past it (no replica in sync: just after a failover) the sender is answered all the same, the request being stored and delivered, and `hookwatch_unreplicated_captures_total` counts it: a second failover before a replica catches up could lose it.',
  },
  redisPrefix: {
    env: 'REDIS_PREFIX',
    schema: z.string().min(1).max(64).regex(/^[A-Za-z0-9:_.-]+$/, 'letters, digits and : _ . - only').default('hookwatch:v3:'),
    doc: 'Prefix of every Redis key and channel, so several deployments (or test runs) can share one Redis.',
  },
  redisCommandTimeoutMs: {
    env: 'REDIS_COMMAND_TIMEOUT_MS',
    schema: integer(50, 60_000).default(2000),
    doc: 'Longest any Redis command may take; past it the request gets 503 STORE_UNAVAILABLE rather than hanging.',
  },
} as const;

/** Live sockets: watchers and what they may send. */
const live = {
  maxWatchersPerEndpoint: {
    env: 'MAX_WATCHERS_PER_ENDPOINT',
    schema: integer(1, 10_000).default(100),
    doc: 'Sockets watching one endpoint at once (per instance).',
  },
  heartbeatMs: {
    env: 'HEARTBEAT_MS',
    schema: integer(1000, 10 * 60 * 1000).default(30_000),
    doc: 'WebSocket ping interval (ms); a socket that misses one pong is terminated.',
  },
  maxSocketBufferBytes: {
    env: 'MAX_SOCKET_BUFFER_BYTES',
    schema: integer(2 * SMALLEST_RECORD, 1024 * MIB).default(16 * MIB),
    doc: 'Unsent bytes a watcher may fall behind before it is disconnected (it reconnects and resumes).',
  },
  liveConnectsPerAddress: {
    env: 'LIVE_CONNECTS_PER_ADDRESS',
    schema: integer(0, 100_000_000).default(120),
    doc: 'Live sockets one client address may open per window. A socket creates at most one endpoint, so this also bounds endpoint creation. 0 turns it off.',
  },
  maxLiveSocketsPerAddress: {
    env: 'MAX_LIVE_SOCKETS_PER_ADDRESS',
    schema: integer(1, 100_000).default(16),
    doc: 'Open live sockets per client address (IPv6 by /64). A socket holds at most one endpoint, so this bounds the endpoints one address keeps alive. Past it the upgrade gets 429 TOO_MANY_SOCKETS.',
  },
  respondTimeoutMs: {
    env: 'RESPOND_TIMEOUT_MS',
    schema: integer(100, 30_000).default(10_000),
    doc: 'How long a sender waits for the local app\'s answer while a `hookwatch forward --respond` holds its endpoint; past it (or with no responder) it gets the configured answer.',
  },
  respondMaxWaiting: {
    env: 'RESPOND_MAX_WAITING',
    schema: integer(1, 100_000).default(1000),
    doc: 'Senders one instance holds waiting for a local app\'s answer at once; past it a sender gets the configured answer at once.',
  },
  respondMaxWaitingPerAddress: {
    env: 'RESPOND_MAX_WAITING_PER_ADDRESS',
    schema: integer(1, 100_000).default(100),
    doc: 'Senders from one client address (IPv6 by /64) held waiting for a local app\'s answer at once; past it that address\'s senders get the configured answer at once, so one address cannot take every waiting place.',
  },
  respondMaxBytes: {
    env: 'RESPOND_MAX_BYTES',
    schema: integer(2 * MIB, 1024 * MIB).default(64 * MIB),
    doc: 'Bytes of local apps\' answers one instance holds while relaying them to their senders; past it a sender gets the configured answer instead.',
  },
  liveMessagesPerSecond: {
    env: 'LIVE_MESSAGES_PER_SECOND',
    schema: integer(1, 10_000).default(20),
    doc: 'Messages one live socket may send per second (bursts of twice that); past it the socket is closed with 4029.',
  },
} as const;

/** Rate limits and connection caps. */
const traffic = {
  rateLimitWindowMs: {
    env: 'RATE_LIMIT_WINDOW_MS',
    schema: integer(1000, 24 * 60 * 60 * 1000).default(60_000),
    doc: 'Window of the rate limits below (ms).',
  },
  rateLimitPerEndpoint: {
    env: 'RATE_LIMIT_PER_ENDPOINT',
    schema: integer(0, 100_000_000).default(6000),
    doc: 'Requests one receiver URL accepts per window, from all senders together; past it 429 with Retry-After. 0 turns it off.',
  },
  rateLimitPerAddress: {
    env: 'RATE_LIMIT_PER_ADDRESS',
    schema: integer(0, 100_000_000).default(3000),
    doc: 'Receiver requests one client address may send per window (IPv6 by /64); past it 429 with Retry-After. 0 turns it off.',
  },
  maxConnections: {
    env: 'MAX_CONNECTIONS',
    schema: integer(16, 1_000_000).default(10_000),
    doc: 'Open TCP connections to the process, live sockets included; past it new ones are closed at once.',
  },
  maxConnectionsPerAddress: {
    env: 'MAX_CONNECTIONS_PER_ADDRESS',
    schema: integer(1, 1_000_000).default(256),
    doc: 'Open TCP connections per client address (IPv6 by /64); past it a new one gets 429 TOO_MANY_CONNECTIONS and is closed.',
  },
} as const;

/**
 * Every setting the service reads: its env var, its flag (same words), its type, range and
 * default. This table is the only place that reads `process.env` or argv (via `loadConfig`),
 * and the README's settings table mirrors it (a test keeps the two in step).
 */
export const settings = { ...listening, ...access, ...capture, ...storage, ...endpoints, ...redis, ...live, ...traffic } as const;

type Settings = typeof settings;
export type Config = Readonly<{ [K in keyof Settings]: z.output<Settings[K]['schema']> }>;
type Key = keyof Config;

/**
 * Defaults that depend on another setting follow it, so only values the user set can conflict
 * (two set values that do are still refused, naming both). Each entry gives a setting the user did
 * not set its value from the config so far, where it and every setting not yet derived hold the
 * user's value or the plain default. Applied in this order (a later entry sees earlier results).
 */
const derivedDefaults: { [K in Key]?: (config: Config, isSet: (key: Key) => boolean) => Config[K] } = {
  // At least the stored body caps.
  readLimitBytes: (c) => Math.max(c.readLimitBytes, c.maxBodyBytes, c.keptMaxBodyBytes),
  // Shrinks only when the record budgets cannot hold a head this large even with the set body caps.
  maxHeaderBytes: (c, isSet) => {
    const bodies = Math.max(isSet('maxBodyBytes') ? c.maxBodyBytes : 0, isSet('keptMaxBodyBytes') ? c.keptMaxBodyBytes : 0);
    return largestFitting(MIN_HEADER_BYTES, c.maxHeaderBytes, (maxHeaderBytes) => maxRecordBytes({ maxBodyBytes: bodies, maxHeaderBytes }) <= recordRoom(c));
  },
  // At most the read limit, and small enough for the largest record to fit the budgets.
  maxBodyBytes: (c) => Math.min(c.readLimitBytes, bodyFitting(c, c.maxBodyBytes)),
  keptMaxBodyBytes: (c) => Math.min(c.readLimitBytes, bodyFitting(c, c.keptMaxBodyBytes)),
  // Holds the largest record, within the total.
  maxStoredBytesPerEndpoint: (c) => Math.min(Math.max(c.maxStoredBytesPerEndpoint, largestRecord(c)), c.maxStoredBytes),
  maxSocketBufferBytes: (c) => Math.max(c.maxSocketBufferBytes, 2 * largestRecord(c)),
  maxStoredBytes: (c) => Math.max(c.maxStoredBytes, c.maxStoredBytesPerEndpoint),
  requestTimeoutMs: (c) => Math.max(c.requestTimeoutMs, c.headersTimeoutMs),
  headersTimeoutMs: (c) => Math.min(c.headersTimeoutMs, c.requestTimeoutMs),
  // Enough partitions to spread over a Cluster's shards evenly (48 = 3 × 16, 2 × 24, 4 × 12, …).
  redisPartitions: (c) => (c.redisClusterNodes === undefined ? 1 : 48),
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** `MAX_BODY_BYTES` -> `max-body-bytes`: a flag and its env var use the same words. */
export function toFlag(env: string): string {
  return env.toLowerCase().replaceAll('_', '-');
}

/**
 * Builds the frozen config from defaults < env < flags. Throws ConfigError naming every bad
 * setting (and every unknown flag); never exits the process itself.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: string[] = process.argv.slice(2)): Config {
  const options = Object.fromEntries(
    Object.values(settings).map((setting) => [toFlag(setting.env), { type: 'string' as const }]),
  );
  let flags: Record<string, string | boolean | undefined>;
  try {
    flags = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new ConfigError([(error as Error).message]);
  }

  const problems: string[] = [];
  const result: Record<string, unknown> = {};
  const set = new Set<Key>();
  for (const [key, setting] of Object.entries(settings)) {
    const flag = toFlag(setting.env);
    const raw = flags[flag] ?? emptyToUndefined(env[setting.env]);
    const parsed = (setting.schema as z.ZodType).safeParse(raw);
    if (parsed.success) {
      result[key] = parsed.data;
      if (raw !== undefined) set.add(key as Key);
    } else {
      const source = flags[flag] !== undefined ? `--${flag}` : setting.env;
      // A secret's value is never echoed, even when it is wrong.
      const shown = 'secret' in setting ? '(hidden)' : JSON.stringify(raw);
      problems.push(`${source}=${shown}: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
    }
  }
  if (problems.length === 0) {
    for (const [key, derive] of Object.entries(derivedDefaults) as [Key, (c: Config, isSet: (key: Key) => boolean) => unknown][]) {
      if (!set.has(key)) result[key] = derive(result as Config, (other) => set.has(other));
    }
  }
  const config = result as Config;
  /** `NAME (value)`, marked when the value is a default, so a conflict shows which side the user set. */
  const show = (key: Key) => `${settings[key].env} (${String(config[key])}${set.has(key) ? '' : ', by default'})`;
  if (problems.length === 0 && config.maxBodyBytes > config.readLimitBytes) {
    problems.push(`${show('maxBodyBytes')} must not exceed ${show('readLimitBytes')}`);
  }
  if (problems.length === 0 && config.keptMaxBodyBytes > config.readLimitBytes) {
    problems.push(`${show('keptMaxBodyBytes')} must not exceed ${show('readLimitBytes')}`);
  }
  if (problems.length === 0) problems.push(...checkBudgets(config, show));
  const redisWays = (['redisUrl', 'redisSentinels', 'redisClusterNodes'] as const).filter((key) => config[key] !== undefined);
  if (problems.length === 0 && redisWays.length > 1) {
    problems.push(`${redisWays.map((key) => settings[key].env).join(' and ')} are each a way to reach Redis: set exactly one`);
  }
  if (problems.length === 0 && (config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined)) {
    problems.push('TLS_CERT_FILE and TLS_KEY_FILE go together: set both or neither');
  }
  if (problems.length === 0) problems.push(...checkAccess(config));
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** Config for tests and embedders: defaults, with the given overrides. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  return Object.freeze({ ...loadConfig({}, []), ...overrides });
}

/** A mode that needs something to judge callers by says what is missing. */
function checkAccess(config: Config): string[] {
  if (config.accessMode === 'token' && config.accessTokens === undefined && config.accessTokensFile === undefined) {
    return ['ACCESS_MODE=token needs ACCESS_TOKENS or ACCESS_TOKENS_FILE: the tokens that may create and watch endpoints'];
  }
  if (config.accessMode === 'proxy' && config.trustProxy === false) {
    return [`ACCESS_MODE=proxy needs TRUST_PROXY: the addresses of the authenticating proxy, the only senders whose ${config.accessUserHeader} header is believed`];
  }
  return [];
}

/**
 * The budgets must fit the largest record a request can make, or one request could empty an
 * endpoint's log or force a watcher that keeps up to disconnect.
 */
function checkBudgets(config: Config, show: (key: Key) => string): string[] {
  const problems: string[] = [];
  const largest = largestRecord(config);
  const allow = `the largest record ${show('maxBodyBytes')}, ${show('keptMaxBodyBytes')} and ${show('maxHeaderBytes')} allow`;
  if (config.maxStoredBytesPerEndpoint > config.maxStoredBytes) {
    problems.push(`${show('maxStoredBytesPerEndpoint')} must not exceed ${show('maxStoredBytes')}`);
  }
  if (config.maxStoredBytes < largest) {
    problems.push(`${show('maxStoredBytes')} must hold ${allow} (${largest} bytes)`);
  } else if (config.maxStoredBytesPerEndpoint < largest) {
    problems.push(`${show('maxStoredBytesPerEndpoint')} must hold ${allow} (${largest} bytes)`);
  }
  if (config.maxSocketBufferBytes < 2 * largest) {
    problems.push(`${show('maxSocketBufferBytes')} must be at least twice ${allow} (2 × ${largest} bytes)`);
  }
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    problems.push(`${show('headersTimeoutMs')} must not exceed ${show('requestTimeoutMs')}`);
  }
  return problems;
}

function largestRecord(config: Config): number {
  return maxRecordBytes({ maxBodyBytes: Math.max(config.maxBodyBytes, config.keptMaxBodyBytes), maxHeaderBytes: config.maxHeaderBytes });
}

/** What one record may take: an endpoint's budget, the total, and half a watcher's buffer. */
function recordRoom(config: Config): number {
  return Math.min(config.maxStoredBytesPerEndpoint, config.maxStoredBytes, Math.floor(config.maxSocketBufferBytes / 2));
}

/** The largest body cap up to `cap` whose largest record fits the record room. */
function bodyFitting(config: Config, cap: number): number {
  return largestFitting(0, cap, (maxBodyBytes) => maxRecordBytes({ maxBodyBytes, maxHeaderBytes: config.maxHeaderBytes }) <= recordRoom(config));
}

/** The largest n in [low, high] that `fits` (monotone: true up to some n), or `high` when none does (the check then names the conflict). */
function largestFitting(low: number, high: number, fits: (n: number) => boolean): number {
  if (fits(high) || !fits(low)) return high;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
