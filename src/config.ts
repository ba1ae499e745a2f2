import { parseArgs } from 'node:util';
import { z } from 'zod';
import { parseAccessTokens } from './access/access-tokens.js';
import { maxRecordBytes } from './capture/record-bounds.js';

const KIB = 1024;
const MIB = 1024 * KIB;

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** `host:port,host:port`: Redis sentinels or cluster nodes. */
const hostPorts = z.string().transform((value, ctx): Array<{ host: string; port: number }> => {
  const nodes = value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  const parsed = nodes.map((node) => /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(node));
  if (nodes.length === 0 || parsed.some((match) => match === null || Number(match[2]) > 65535)) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be host:port pairs separated by commas, e.g. 10.0.0.1:26379,10.0.0.2:26379',
    });
    return z.NEVER;
  }
  return parsed.map((match) => ({
    host: (match as RegExpExecArray)[1]!.replace(/^\[|\]$/g, ''),
    port: Number((match as RegExpExecArray)[2]),
  }));
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
  const list = trimmed
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
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

/**
 * A setting: its env var (and flag, same words), its type, range and default, and its line in
 * the README's settings table, which `npm run docs:settings` writes from these (a test fails
 * when the README is out of date).
 */
interface Setting {
  env: string;
  schema: z.ZodType;
  doc: string;
  /** When the default follows other settings: how, after the plain default in the table. */
  defaultFollows?: string;
  /** Never echoed, not even when refused. */
  secret?: true;
}

/** Where the service listens, how senders and browsers reach it, and what it logs. */
const server = {
  host: { env: 'HOST', schema: z.string().min(1).default('0.0.0.0'), doc: 'Address to listen on.' },
  port: { env: 'PORT', schema: integer(0, 65535).default(8080), doc: 'TCP port to listen on (0 picks a free one).' },
  publicUrl: {
    env: 'PUBLIC_URL',
    schema: publicUrl.optional(),
    doc: 'Base URL senders use, e.g. `https://hooks.example.com`. Unset: taken from each request (Host, and X-Forwarded-Proto/Host only when `TRUST_PROXY` is set).',
  },
  trustProxy: {
    env: 'TRUST_PROXY',
    schema: trustProxy.default(false),
    doc: '`false`, `true`, or a comma-separated list of proxy addresses/CIDRs whose X-Forwarded-* headers are believed (sender address, scheme, host).',
  },
  tlsCertFile: {
    env: 'TLS_CERT_FILE',
    schema: z.string().min(1).optional(),
    doc: 'PEM certificate chain: serve HTTPS directly (with `TLS_KEY_FILE`). See [docs/deploy.md](docs/deploy.md).',
  },
  tlsKeyFile: {
    env: 'TLS_KEY_FILE',
    schema: z.string().min(1).optional(),
    doc: 'PEM private key for `TLS_CERT_FILE`.',
  },
  allowedOrigins: {
    env: 'ALLOWED_ORIGINS',
    schema: z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((item) => item.trim().replace(/\/+$/, ''))
          .filter(Boolean),
      )
      .pipe(z.array(z.string().url()))
      .default([]),
    doc: "Extra browser origins allowed to open live sockets (comma-separated). The page's own origin and `PUBLIC_URL`'s are always allowed; clients sending no `Origin` (scripts) are too.",
  },
  logLevel: {
    env: 'LOG_LEVEL',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    doc: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. One line per captured request at `debug`.',
  },
} as const satisfies Record<string, Setting>;

/**
 * Who may create, watch and configure endpoints (docs/deploy.md#access).
 * Receiver URLs stay public in every mode.
 */
const access = {
  accessMode: {
    env: 'ACCESS_MODE',
    schema: z.enum(['open', 'token', 'proxy'], { error: 'expected open, token or proxy' }).default('open'),
    doc: 'Who may create, watch and configure endpoints: `open` (anyone), `token` (a token from `ACCESS_TOKENS`/`ACCESS_TOKENS_FILE`), `proxy` (the user in `ACCESS_USER_HEADER` from a `TRUST_PROXY` address). See [A private instance](#a-private-instance-who-may-create-and-watch).',
  },
  accessTokens: {
    env: 'ACCESS_TOKENS',
    schema: z
      .string()
      .transform((value, ctx) => {
        const tokens = parseAccessTokens(value);
        if (typeof tokens !== 'string' && tokens.length > 0) return tokens;
        ctx.addIssue({
          code: 'custom',
          message:
            typeof tokens === 'string'
              ? tokens
              : 'no tokens: expected name:token or token entries, separated by commas',
        });
        return z.NEVER;
      })
      .optional(),
    secret: true,
    doc: 'Tokens for `ACCESS_MODE=token`, comma-separated, each `name:token` or `token` (16–512 of `A-Z a-z 0-9 . _ ~ + / = -`); the name is the user in logs. Never logged, not even when refused at start.',
  },
  accessTokensFile: {
    env: 'ACCESS_TOKENS_FILE',
    schema: z.string().min(1).optional(),
    doc: 'A file of tokens, one `name:token` or `token` a line (`#` comments), read at start and again on `SIGHUP` (a bad file keeps the previous tokens). With `ACCESS_TOKENS`, both count. `ACCESS_MODE=token` without either refuses to start.',
  },
  accessUserHeader: {
    env: 'ACCESS_USER_HEADER',
    schema: z
      .string()
      .regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}$/, 'expected a header name')
      .transform((name) => name.toLowerCase())
      .default('x-forwarded-email'),
    doc: '`ACCESS_MODE=proxy`: the header the sign-in proxy puts the user in (oauth2-proxy: `X-Forwarded-Email`; Authelia: `Remote-Email`; Cloudflare Access: `Cf-Access-Authenticated-User-Email`). Believed only from `TRUST_PROXY` addresses; `ACCESS_MODE=proxy` without `TRUST_PROXY` refuses to start.',
  },
} as const satisfies Record<string, Setting>;

/** Where kept endpoints live without Redis. */
const storage = {
  dataDir: {
    env: 'DATA_DIR',
    schema: z.string().min(1).default('./data'),
    doc: 'Where kept endpoints and their requests live without Redis: an SQLite file in this folder, created when missing. `none` keeps them in memory only (gone on restart). Unused with Redis.',
  },
  maxDiskBytes: {
    env: 'MAX_DISK_BYTES',
    schema: integer(MIB, 1024 * 1024 * MIB).default(1024 * MIB),
    doc: 'Bytes of stored requests kept endpoints keep on disk (SQLite, under DATA_DIR) (counted as for `MAX_STORED_BYTES`); past it the oldest kept requests go first and their watchers get `evicted`.',
  },
  cleanupIntervalMs: {
    env: 'CLEANUP_INTERVAL_MS',
    schema: integer(1000, 24 * 60 * 60 * 1000).default(60_000),
    doc: 'How often expired endpoints and their requests are removed (they are already gone for every request and socket before that).',
  },
} as const satisfies Record<string, Setting>;

/** Several instances sharing Redis. */
const redis = {
  redisUrl: {
    env: 'REDIS_URL',
    schema: z
      .string()
      .refine((value) => /^rediss?:\/\//.test(value), 'must start with redis:// or rediss://')
      .optional(),
    doc: '`redis://host:6379/0` (or `rediss://`): share endpoints, requests, leases, rate limits and fan-out with every instance on this Redis (7.0 or later). Unset (and no `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES`): everything in this process. See [docs/deploy.md](docs/deploy.md#several-instances).',
  },
  redisSentinels: {
    env: 'REDIS_SENTINELS',
    schema: hostPorts.optional(),
    doc: '`host:port,host:port`: ask these sentinels for the primary (`REDIS_SENTINEL_NAME`) and follow its failovers. Instead of `REDIS_URL`.',
  },
  redisSentinelName: {
    env: 'REDIS_SENTINEL_NAME',
    schema: z.string().min(1).max(128).default('mymaster'),
    doc: 'The name the sentinels monitor the primary under.',
  },
  redisClusterNodes: {
    env: 'REDIS_CLUSTER_NODES',
    schema: hostPorts.optional(),
    doc: "`host:port,host:port`: some nodes of a Redis Cluster; endpoints spread over its shards, each endpoint's keys and channel in one hash slot (sharded pub/sub). Instead of `REDIS_URL`.",
  },
  redisPartitions: {
    env: 'REDIS_PARTITIONS',
    schema: integer(1, 1024).default(1),
    defaultFollows: 'or `48` with `REDIS_CLUSTER_NODES`',
    doc: 'Parts the Redis keyspace is cut into, each in one hash slot with its share of `MAX_STORED_BYTES` and `MAX_ENDPOINTS`. Every instance must use the same.',
  },
  redisReplicaWaitMs: {
    env: 'REDIS_REPLICA_WAIT_MS',
    schema: integer(0, 10_000).default(1000),
    doc: 'With Sentinel, how long a capture waits for a replica to have it (`WAIT`) before its sender is answered; `0` does not wait. Past it (no replica in sync, as just after a failover) the sender is answered all the same, the request being stored and delivered, and `hookwatch_unreplicated_captures_total` counts it: a second failover before a replica catches up could lose it.',
  },
  redisPrefix: {
    env: 'REDIS_PREFIX',
    schema: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9:_.-]+$/, 'letters, digits and : _ . - only')
      .default('hookwatch:v4:'),
    doc: "Prefix of every Redis key and channel, so deployments (and test runs) can share one Redis. (`v4`: this release's layout, each stored request beside its seq, as bytes; data under the `v3`, `v2` and `v1` layouts is not read.)",
  },
  redisCommandTimeoutMs: {
    env: 'REDIS_COMMAND_TIMEOUT_MS',
    schema: integer(50, 60_000).default(2000),
    doc: 'Longest a Redis call may take; past it the request gets `503 STORE_UNAVAILABLE` instead of hanging, and a capture Redis runs after that is not stored (its sender was told 503).',
  },
} as const satisfies Record<string, Setting>;

/** How long endpoints live, and what a creator of a kept one may choose. */
const endpoints = {
  keptTtlMs: {
    env: 'KEPT_TTL_MS',
    schema: integer(1000, 30 * 24 * 60 * 60 * 1000).default(2 * 60 * 60 * 1000),
    doc: 'How long a kept endpoint lives from its creation (ms), watched or not, unless its creator picks another lifetime.',
  },
  keptMaxTtlMs: {
    env: 'KEPT_MAX_TTL_MS',
    schema: integer(1000, 365 * 24 * 60 * 60 * 1000).default(7 * 24 * 60 * 60 * 1000),
    doc: 'The longest lifetime a kept endpoint may be given at creation or by an extend (ms); past it `400 INVALID_REQUEST`.',
  },
  graceMs: {
    env: 'GRACE_MS',
    schema: integer(0, 24 * 60 * 60 * 1000).default(30_000),
    doc: 'How long a live endpoint outlives its last watcher (ms), so a reload or a network blip does not lose it. `0` purges at once.',
  },
  leaseMs: {
    env: 'LEASE_MS',
    schema: integer(1000, 10 * 60 * 1000).default(15_000),
    doc: "How long an instance's hold on a watched endpoint lasts without renewal (renewed every third of it). An instance that dies stops renewing: its endpoints live this plus `GRACE_MS`, time for their watchers to reconnect to another instance.",
  },
  namedEndpoints: {
    env: 'NAMED_ENDPOINTS',
    schema: flag.default(true),
    doc: '`false` refuses kept endpoints with a chosen `name` (`400 INVALID_REQUEST`).',
  },
  allowUnredacted: {
    env: 'ALLOW_UNREDACTED',
    schema: flag.default(true),
    doc: '`false` refuses kept endpoints created with `redact: false` (`400 INVALID_REQUEST`): every secret is stored redacted.',
  },
  redactHeaders: {
    env: 'REDACT_HEADERS',
    schema: z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((item) => item.trim().toLowerCase())
          .filter(Boolean),
      )
      .pipe(z.array(z.string().regex(/^[!#$%&'*+\-.^_`|~0-9a-z]+$/, 'expected header names')))
      .default([]),
    doc: 'More header names (comma-separated) whose values kept endpoints store as `[redacted]`, beyond the built-in list.',
  },
} as const satisfies Record<string, Setting>;

/** What one request may be: its size, its head, its timing, and how long its sender may wait. */
const requestLimits = {
  maxBodyBytes: {
    env: 'MAX_BODY_BYTES',
    schema: integer(0, 64 * MIB).default(MIB),
    defaultFollows: 'or `READ_LIMIT_BYTES` if smaller, or less if the record budgets¹ need it',
    doc: 'Stored body cap per request. Longer bodies are stored cut to this size and flagged `truncated`.',
  },
  keptMaxBodyBytes: {
    env: 'KEPT_MAX_BODY_BYTES',
    schema: integer(0, 64 * MIB).default(64 * KIB),
    defaultFollows: 'or `READ_LIMIT_BYTES` if smaller, or less if the record budgets¹ need it',
    doc: 'Stored body cap per request on kept endpoints; longer bodies are cut and flagged `truncated`.',
  },
  readLimitBytes: {
    env: 'READ_LIMIT_BYTES',
    schema: integer(1, 1024 * MIB).default(10 * MIB),
    defaultFollows: 'or `MAX_BODY_BYTES` or `KEPT_MAX_BODY_BYTES` if larger',
    doc: 'Hard read limit per request. Past it reading stops, the sender gets 413, the request is still captured (truncated).',
  },
  maxHeaderBytes: {
    env: 'MAX_HEADER_BYTES',
    schema: integer(MIN_HEADER_BYTES, 1024 * KIB).default(16 * KIB),
    defaultFollows: 'or less if the record budgets¹ need it',
    doc: 'Largest request line + headers accepted; past it `431 HEADERS_TOO_LARGE`.',
  },
  maxJsonDepth: {
    env: 'MAX_JSON_DEPTH',
    schema: integer(1, 10_000).default(64),
    doc: 'Deepest nesting for which a body is flagged `isJson` and shown as a tree; deeper bodies are still captured and shown raw.',
  },
  headersTimeoutMs: {
    env: 'HEADERS_TIMEOUT_MS',
    schema: integer(1000, 60 * 60 * 1000).default(10_000),
    defaultFollows: 'or `REQUEST_TIMEOUT_MS` if smaller',
    doc: 'Time a connection has to send a whole request head, from connecting (so an idle new connection is closed after it); past it `408 REQUEST_TIMEOUT`.',
  },
  requestTimeoutMs: {
    env: 'REQUEST_TIMEOUT_MS',
    schema: integer(1000, 60 * 60 * 1000).default(60_000),
    defaultFollows: 'or `HEADERS_TIMEOUT_MS` if larger',
    doc: 'Time a sender has to deliver a whole request, head and body (stops slowloris senders); past it `408 REQUEST_TIMEOUT`.',
  },
  idleTimeoutMs: {
    env: 'IDLE_TIMEOUT_MS',
    schema: integer(1000, 60 * 60 * 1000).default(30_000),
    doc: 'A keep-alive connection idle this long is closed.',
  },
  respondTimeoutMs: {
    env: 'RESPOND_TIMEOUT_MS',
    schema: integer(100, 30_000).default(10_000),
    doc: "How long a sender waits for the local app's answer while a `hookwatch forward --respond` holds its endpoint; past it, or with no responder, it gets the configured answer.",
  },
} as const satisfies Record<string, Setting>;

/** What one endpoint may hold and receive. */
const endpointLimits = {
  requestsPerEndpoint: {
    env: 'REQUESTS_PER_ENDPOINT',
    schema: integer(1, 1000).default(50),
    doc: 'Requests kept per endpoint; the oldest is dropped first.',
  },
  maxStoredBytesPerEndpoint: {
    env: 'MAX_STORED_BYTES_PER_ENDPOINT',
    schema: integer(SMALLEST_RECORD, 64 * 1024 * MIB).default(32 * MIB),
    defaultFollows: 'or the largest record¹ if larger, or `MAX_STORED_BYTES` if smaller',
    doc: "Bytes of stored requests one endpoint holds, counted as for `MAX_STORED_BYTES`; past it that endpoint's oldest requests go first.",
  },
  rateLimitPerEndpoint: {
    env: 'RATE_LIMIT_PER_ENDPOINT',
    schema: integer(0, 100_000_000).default(6000),
    doc: 'Requests one receiver URL accepts per `RATE_LIMIT_WINDOW_MS` from all senders together; past it `429 RATE_LIMITED` with `Retry-After`, not captured. `0` turns it off.',
  },
  maxWatchersPerEndpoint: {
    env: 'MAX_WATCHERS_PER_ENDPOINT',
    schema: integer(1, 10_000).default(100),
    doc: 'Sockets watching one endpoint at once (per instance); past it `TOO_MANY_WATCHERS`.',
  },
} as const satisfies Record<string, Setting>;

/** What one client address or signed-in user may do. */
const clientLimits = {
  rateLimitWindowMs: {
    env: 'RATE_LIMIT_WINDOW_MS',
    schema: integer(1000, 24 * 60 * 60 * 1000).default(60_000),
    doc: 'Window of every rate limit (ms): the per-window counts below and `RATE_LIMIT_PER_ENDPOINT`.',
  },
  rateLimitPerAddress: {
    env: 'RATE_LIMIT_PER_ADDRESS',
    schema: integer(0, 100_000_000).default(3000),
    doc: 'Receiver requests one client address may send per window; past it `429 RATE_LIMITED` with `Retry-After`. `0` turns it off.',
  },
  maxConnectionsPerAddress: {
    env: 'MAX_CONNECTIONS_PER_ADDRESS',
    schema: integer(1, 1_000_000).default(256),
    doc: 'Open TCP connections per client address; past it `429 TOO_MANY_CONNECTIONS` and the connection is closed. A proxy trusted by `TRUST_PROXY` is not capped (it carries many clients; the per-address rate limits and socket caps still count each client by `X-Forwarded-For`).',
  },
  keptCreatesPerAddress: {
    env: 'KEPT_CREATES_PER_ADDRESS',
    schema: integer(0, 100_000_000).default(30),
    doc: 'Endpoints one client address may create per window: every call to `POST /api/endpoints`, counted before the body is read (so live and refused creations count too), and every kept endpoint a live socket creates; past it `429 RATE_LIMITED` (a socket gets `RATE_LIMITED` and close 4029). `0` turns it off.',
  },
  keptCreatesPerUser: {
    env: 'KEPT_CREATES_PER_USER',
    schema: integer(0, 100_000_000).default(30),
    doc: 'For a signed-in user, instead of `KEPT_CREATES_PER_ADDRESS`: endpoints the user may create per window, from any address; past it `429 RATE_LIMITED`. `0` turns it off.',
  },
  maxKeptPerAddress: {
    env: 'MAX_KEPT_PER_ADDRESS',
    schema: integer(1, 250).default(20),
    doc: 'Kept endpoints one client address holds at once when nobody is signed in; past it `429 TOO_MANY_KEPT`. Extending keeps an endpoint, it does not add one.',
  },
  maxKeptPerUser: {
    env: 'MAX_KEPT_PER_USER',
    // A user's endpoints are counted from their list, which is at most 500 long (store.ts).
    schema: integer(1, 250).default(100),
    doc: 'Kept endpoints one signed-in user holds at once, instead of `MAX_KEPT_PER_ADDRESS`; past it `429 TOO_MANY_KEPT`.',
  },
  liveConnectsPerAddress: {
    env: 'LIVE_CONNECTS_PER_ADDRESS',
    schema: integer(0, 100_000_000).default(120),
    doc: 'Live sockets one client address may open per window. A socket creates at most one endpoint, so this also bounds endpoint creation. `0` turns it off.',
  },
  maxLiveSocketsPerAddress: {
    env: 'MAX_LIVE_SOCKETS_PER_ADDRESS',
    schema: integer(1, 100_000).default(16),
    doc: 'Open live sockets per client address; past it the handshake gets `429 TOO_MANY_SOCKETS`. A socket holds at most one endpoint, so one address keeps at most this many endpoints watched (plus those in their grace).',
  },
  maxApiAnswerBytesPerAddress: {
    env: 'MAX_API_ANSWER_BYTES_PER_ADDRESS',
    schema: integer(MIB, 64 * 1024 * MIB).default(16 * MIB),
    doc: 'Bytes of endpoints-API answers written to one client address but not yet read; past it a poll gets `429 RATE_LIMITED` with `Retry-After`.',
  },
  respondMaxWaitingPerAddress: {
    env: 'RESPOND_MAX_WAITING_PER_ADDRESS',
    schema: integer(1, 100_000).default(100),
    doc: "Senders from one client address held waiting for a local app's answer at once; past it that address's senders get the configured answer at once, so one address cannot take every waiting place. A sender that hangs up stops waiting.",
  },
} as const satisfies Record<string, Setting>;

/** What one live socket may cost and send. */
const socketLimits = {
  maxSocketBufferBytes: {
    env: 'MAX_SOCKET_BUFFER_BYTES',
    schema: integer(2 * SMALLEST_RECORD, 1024 * MIB).default(16 * MIB),
    defaultFollows: 'or twice the largest record¹ if larger',
    doc: 'Unsent bytes a watcher may fall behind before it is disconnected (it reconnects and resumes).',
  },
  liveMessagesPerSecond: {
    env: 'LIVE_MESSAGES_PER_SECOND',
    schema: integer(1, 10_000).default(20),
    doc: 'Messages one live socket may send per second (bursts of twice that); past it `TOO_MANY_MESSAGES` and close 4029. Ten malformed messages in a row close a socket with 1008.',
  },
  heartbeatMs: {
    env: 'HEARTBEAT_MS',
    schema: integer(1000, 10 * 60 * 1000).default(30_000),
    doc: 'WebSocket ping interval (ms); a socket that misses one pong is terminated.',
  },
} as const satisfies Record<string, Setting>;

/** What the whole process may hold at once: its memory budgets and its caps. */
const processLimits = {
  maxStoredBytes: {
    env: 'MAX_STORED_BYTES',
    schema: integer(MIB, 64 * 1024 * MIB).default(256 * MIB),
    defaultFollows: 'or `MAX_STORED_BYTES_PER_ENDPOINT` if larger',
    doc: 'Bytes of stored requests the whole process holds, counted on the stored records themselves. When full, the oldest stored requests go first, across endpoints; their watchers get `evicted`, and `hookwatch_evicted_requests_total` counts them.',
  },
  maxEndpoints: {
    env: 'MAX_ENDPOINTS',
    schema: integer(1, 10_000_000).default(10_000),
    doc: 'Live endpoints at once; past it creation fails with `503 AT_CAPACITY`.',
  },
  maxKeptEndpoints: {
    env: 'MAX_KEPT_ENDPOINTS',
    schema: integer(1, 10_000_000).default(10_000),
    doc: 'Kept endpoints at once; past it creation fails with `503 AT_CAPACITY`.',
  },
  maxReadingBytes: {
    env: 'MAX_READING_BYTES',
    schema: integer(MIB, 64 * 1024 * MIB).default(64 * MIB),
    doc: 'Body bytes held by requests still being read, all together; past it a receiver answers `503 AT_CAPACITY` with `Retry-After: 1` and closes the connection.',
  },
  maxConnections: {
    env: 'MAX_CONNECTIONS',
    schema: integer(16, 1_000_000).default(10_000),
    doc: 'Open TCP connections in all, live sockets included; past it new ones are closed at once.',
  },
  maxApiAnswerBytes: {
    env: 'MAX_API_ANSWER_BYTES',
    schema: integer(MIB, 64 * 1024 * MIB).default(32 * MIB),
    doc: 'Bytes of endpoints-API answers written but not yet read by their clients, all together; past it a poll gets `503 AT_CAPACITY`.',
  },
  maxResponseConfigBytes: {
    env: 'MAX_RESPONSE_CONFIG_BYTES',
    schema: integer(MIB, 64 * 1024 * MIB).default(32 * MIB),
    doc: 'What the response configurations held in this process may cost together (twice their JSON, plus 1 KiB each; the shared default costs nothing); past it setting one gets `503 AT_CAPACITY`. Unused with Redis, which holds them.',
  },
  respondMaxWaiting: {
    env: 'RESPOND_MAX_WAITING',
    schema: integer(1, 100_000).default(1000),
    doc: "Senders one instance holds waiting for a local app's answer at once; past it a sender gets the configured answer at once.",
  },
  respondMaxBytes: {
    env: 'RESPOND_MAX_BYTES',
    schema: integer(2 * MIB, 1024 * MIB).default(64 * MIB),
    doc: "Bytes of local apps' answers one instance holds while relaying them to their senders; past it a sender gets the configured answer instead.",
  },
} as const satisfies Record<string, Setting>;

/**
 * Every setting the service reads, by concern; the limits by what they bound. Each group is the
 * slice of the config the modules of that concern receive, and a section of the README's
 * settings table, in this order (after `startHere`).
 */
export const groups = {
  server: {
    title: 'Listening and reaching the service',
    about: 'Where the service listens, how senders and browsers reach it, and what it logs.',
    settings: server,
  },
  access: {
    title: 'Who may create and watch',
    about:
      'A private instance: who may create, watch and configure endpoints. Receiver URLs stay public in every mode.',
    settings: access,
  },
  storage: {
    title: 'Storage without Redis',
    about: 'One process keeps live endpoints in memory and kept ones in an SQLite file.',
    settings: storage,
  },
  redis: {
    title: 'Redis: several instances',
    about:
      'Set one way to reach Redis and every instance shares endpoints, requests and limits; see [docs/deploy.md](docs/deploy.md#several-instances).',
    settings: redis,
  },
  endpoints: {
    title: 'Endpoint lifetimes and options',
    about: 'How long endpoints live, and what the creator of a kept one may choose.',
    settings: endpoints,
  },
  requestLimits: {
    title: 'Limits on one request',
    about: 'Its size, its head, its timing, and how long its sender may wait.',
    settings: requestLimits,
  },
  endpointLimits: {
    title: 'Limits on one endpoint',
    about: 'What one endpoint may hold and receive.',
    settings: endpointLimits,
  },
  clientLimits: {
    title: 'Limits on one client',
    about:
      'Per client address (IPv6 by /64), or per signed-in user where the access mode knows one. A proxy trusted by `TRUST_PROXY` counts each client it carries by `X-Forwarded-For`.',
    settings: clientLimits,
  },
  socketLimits: {
    title: 'Limits on one live socket',
    about: 'What one watcher may cost and send.',
    settings: socketLimits,
  },
  processLimits: {
    title: 'Limits on the whole process',
    about: 'Budgets and caps on everything one instance holds at once.',
    settings: processLimits,
  },
} as const;

/**
 * Every setting by its key (keys are unique across groups). This table is the only place that
 * reads `process.env` or argv (via `loadConfig`).
 */
export const settings = {
  ...server,
  ...access,
  ...storage,
  ...redis,
  ...endpoints,
  ...requestLimits,
  ...endpointLimits,
  ...clientLimits,
  ...socketLimits,
  ...processLimits,
} as const;

/** What most deployments set, shown first in the README, in this order. */
export const startHere = [
  'host',
  'port',
  'publicUrl',
  'trustProxy',
  'tlsCertFile',
  'tlsKeyFile',
  'dataDir',
  'logLevel',
  'redisUrl',
  'allowedOrigins',
  'keptTtlMs',
  'maxBodyBytes',
] as const satisfies readonly (keyof typeof settings)[];

type Settings = typeof settings;
type Key = keyof Settings;
type Groups = typeof groups;
type ValuesOf<S> = {
  readonly [K in keyof S]: S[K] extends { schema: infer T extends z.ZodType } ? z.output<T> : never;
};
/** Every setting's value by its key: what the settings are checked against each other in, and what tests override. */
export type SettingValues = ValuesOf<Settings>;
/** What the service runs with: one frozen slice per group, so a module can be given only its own. */
export type Config = { readonly [G in keyof Groups]: ValuesOf<Groups[G]['settings']> };

/**
 * Defaults that depend on another setting follow it, so only values the user set can conflict
 * (two set values that do are still refused, naming both). Each entry gives a setting the user did
 * not set its value from the config so far, where it and every setting not yet derived hold the
 * user's value or the plain default. Applied in this order (a later entry sees earlier results).
 */
const derivedDefaults: { [K in Key]?: (values: SettingValues, isSet: (key: Key) => boolean) => SettingValues[K] } = {
  // At least the stored body caps.
  readLimitBytes: (c) => Math.max(c.readLimitBytes, c.maxBodyBytes, c.keptMaxBodyBytes),
  // Shrinks only when the record budgets cannot hold a head this large even with the set body caps.
  maxHeaderBytes: (c, isSet) => {
    const bodies = Math.max(
      isSet('maxBodyBytes') ? c.maxBodyBytes : 0,
      isSet('keptMaxBodyBytes') ? c.keptMaxBodyBytes : 0,
    );
    return largestFitting(
      MIN_HEADER_BYTES,
      c.maxHeaderBytes,
      (maxHeaderBytes) => maxRecordBytes({ maxBodyBytes: bodies, maxHeaderBytes }) <= recordRoom(c),
    );
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
  return toConfig(loadValues(env, argv));
}

/** Config for tests and embedders: defaults, with the given overrides. */
export function defaultConfig(overrides: Partial<SettingValues> = {}): Config {
  return toConfig({ ...loadValues({}, []), ...overrides });
}

/** Each group's settings as its frozen slice. */
function toConfig(values: SettingValues): Config {
  const sliceOf = (group: { settings: object }) =>
    Object.freeze(Object.fromEntries(Object.keys(group.settings).map((key) => [key, values[key as Key]])));
  return Object.freeze(
    Object.fromEntries(Object.entries(groups).map(([name, group]) => [name, sliceOf(group)])),
  ) as Config;
}

/** Every setting's value, checked alone and against the others. */
function loadValues(env: NodeJS.ProcessEnv, argv: string[]): SettingValues {
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
    for (const [key, derive] of Object.entries(derivedDefaults) as [
      Key,
      (c: SettingValues, isSet: (key: Key) => boolean) => unknown,
    ][]) {
      if (!set.has(key)) result[key] = derive(result as SettingValues, (other) => set.has(other));
    }
  }
  const config = result as SettingValues;
  /** `NAME (value)`, marked when the value is a default, so a conflict shows which side the user set. */
  const show = (key: Key) => `${settings[key].env} (${String(config[key])}${set.has(key) ? '' : ', by default'})`;
  if (problems.length === 0 && config.maxBodyBytes > config.readLimitBytes) {
    problems.push(`${show('maxBodyBytes')} must not exceed ${show('readLimitBytes')}`);
  }
  if (problems.length === 0 && config.keptMaxBodyBytes > config.readLimitBytes) {
    problems.push(`${show('keptMaxBodyBytes')} must not exceed ${show('readLimitBytes')}`);
  }
  if (problems.length === 0) problems.push(...checkBudgets(config, show));
  const redisWays = (['redisUrl', 'redisSentinels', 'redisClusterNodes'] as const).filter(
    (key) => config[key] !== undefined,
  );
  if (problems.length === 0 && redisWays.length > 1) {
    problems.push(
      `${redisWays.map((key) => settings[key].env).join(' and ')} are each a way to reach Redis: set exactly one`,
    );
  }
  if (problems.length === 0 && (config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined)) {
    problems.push('TLS_CERT_FILE and TLS_KEY_FILE go together: set both or neither');
  }
  if (problems.length === 0) problems.push(...checkAccess(config));
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** Whether the settings name a way to reach Redis (a URL, sentinels or cluster nodes), which every instance then shares. */
export function usesRedis(redis: Config['redis']): boolean {
  return redis.redisUrl !== undefined || redis.redisSentinels !== undefined || redis.redisClusterNodes !== undefined;
}

/** A mode that needs something to judge callers by says what is missing. */
function checkAccess(config: SettingValues): string[] {
  if (config.accessMode === 'token' && config.accessTokens === undefined && config.accessTokensFile === undefined) {
    return [
      'ACCESS_MODE=token needs ACCESS_TOKENS or ACCESS_TOKENS_FILE: the tokens that may create and watch endpoints',
    ];
  }
  if (config.accessMode === 'proxy' && config.trustProxy === false) {
    return [
      `ACCESS_MODE=proxy needs TRUST_PROXY: the addresses of the authenticating proxy, the only senders whose ${config.accessUserHeader} header is believed`,
    ];
  }
  return [];
}

/**
 * The budgets must fit the largest record a request can make, or one request could empty an
 * endpoint's log or force a watcher that keeps up to disconnect.
 */
function checkBudgets(config: SettingValues, show: (key: Key) => string): string[] {
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

function largestRecord(config: SettingValues): number {
  return maxRecordBytes({
    maxBodyBytes: Math.max(config.maxBodyBytes, config.keptMaxBodyBytes),
    maxHeaderBytes: config.maxHeaderBytes,
  });
}

/** What one record may take: an endpoint's budget, the total, and half a watcher's buffer. */
function recordRoom(config: SettingValues): number {
  return Math.min(config.maxStoredBytesPerEndpoint, config.maxStoredBytes, Math.floor(config.maxSocketBufferBytes / 2));
}

/** The largest body cap up to `cap` whose largest record fits the record room. */
function bodyFitting(config: SettingValues, cap: number): number {
  return largestFitting(
    0,
    cap,
    (maxBodyBytes) => maxRecordBytes({ maxBodyBytes, maxHeaderBytes: config.maxHeaderBytes }) <= recordRoom(config),
  );
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
