import { parseArgs } from 'node:util';
import { z } from 'zod';
import { maxRecordBytes } from './capture/record-bounds.js';

const KIB = 1024;
const MIB = 1024 * KIB;

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

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

const publicUrl = z
  .string()
  .url()
  .refine((value) => /^https?:\/\//.test(value), 'must start with http:// or https://')
  .transform((value) => value.replace(/\/+$/, ''));

/**
 * Every setting the service reads: its env var, its flag (same words), its type, range and
 * default. This table is the only place that reads `process.env` or argv (via `loadConfig`),
 * and the README's settings table mirrors it (a test keeps the two in step).
 */
export const settings = {
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
  requestsPerEndpoint: {
    env: 'REQUESTS_PER_ENDPOINT',
    schema: integer(1, 1000).default(50),
    doc: 'Requests kept per endpoint; the oldest is dropped first.',
  },
  graceMs: {
    env: 'GRACE_MS',
    schema: integer(0, 24 * 60 * 60 * 1000).default(30_000),
    doc: 'How long a live endpoint outlives its last watcher (ms), so a reload or a network blip does not lose it. 0 purges at once.',
  },
  maxStoredBytes: {
    env: 'MAX_STORED_BYTES',
    schema: integer(MIB, 64 * 1024 * MIB).default(256 * MIB),
    doc: 'Bytes of stored requests the whole process holds, counted on the stored records. When full, the oldest stored requests go first, across endpoints; watchers are told (`evicted`).',
  },
  maxStoredBytesPerEndpoint: {
    env: 'MAX_STORED_BYTES_PER_ENDPOINT',
    schema: integer(64 * KIB, 64 * 1024 * MIB).default(32 * MIB),
    doc: 'Bytes of stored requests one endpoint holds; past it its oldest requests go first.',
  },
  maxReadingBytes: {
    env: 'MAX_READING_BYTES',
    schema: integer(MIB, 64 * 1024 * MIB).default(64 * MIB),
    doc: 'Body bytes held by requests still being read, all together; past it new bodies get 503 AT_CAPACITY with Retry-After.',
  },
  leaseMs: {
    env: 'LEASE_MS',
    schema: integer(1000, 10 * 60 * 1000).default(15_000),
    doc: 'How long an instance\'s hold on a watched endpoint lasts without renewal (renewed every third of it). An instance that dies stops renewing: its endpoints live this plus GRACE_MS, time for their watchers to move to another instance.',
  },
  cleanupIntervalMs: {
    env: 'CLEANUP_INTERVAL_MS',
    schema: integer(1000, 24 * 60 * 60 * 1000).default(60_000),
    doc: 'How often expired endpoints and their requests are removed. Until then they are already gone for every request and socket.',
  },
  redisUrl: {
    env: 'REDIS_URL',
    schema: z
      .string()
      .refine((value) => /^rediss?:\/\//.test(value), 'must start with redis:// or rediss://')
      .optional(),
    doc: 'Share endpoints, requests, leases, rate limits and fan-out with other instances through this Redis (`redis://host:6379/0`). Unset: everything in this process\'s memory.',
  },
  redisPrefix: {
    env: 'REDIS_PREFIX',
    schema: z.string().min(1).max(64).regex(/^[A-Za-z0-9:_.-]+$/, 'letters, digits and : _ . - only').default('hookwatch:v1:'),
    doc: 'Prefix of every Redis key and channel, so several deployments (or test runs) can share one Redis.',
  },
  redisCommandTimeoutMs: {
    env: 'REDIS_COMMAND_TIMEOUT_MS',
    schema: integer(50, 60_000).default(2000),
    doc: 'Longest any Redis command may take; past it the request gets 503 STORE_UNAVAILABLE rather than hanging.',
  },
  maxEndpoints: { env: 'MAX_ENDPOINTS', schema: integer(1, 10_000_000).default(10_000), doc: 'Live endpoints at once; past it creation fails with 503 AT_CAPACITY.' },
  keptTtlMs: {
    env: 'KEPT_TTL_MS',
    schema: integer(1000, 30 * 24 * 60 * 60 * 1000).default(2 * 60 * 60 * 1000),
    doc: 'How long a kept endpoint lives from its creation, watched or not (ms).',
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
  keptCreatesPerAddress: {
    env: 'KEPT_CREATES_PER_ADDRESS',
    schema: integer(0, 100_000_000).default(30),
    doc: 'Calls to POST /api/endpoints one client address may make per RATE_LIMIT_WINDOW_MS, counted before the body is read (so live and refused creations count too); past it 429 RATE_LIMITED. 0 turns it off.',
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
    schema: integer(64 * KIB, 1024 * MIB).default(16 * MIB),
    doc: 'Unsent bytes a watcher may fall behind before it is disconnected (it reconnects and resumes).',
  },
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
  liveMessagesPerSecond: {
    env: 'LIVE_MESSAGES_PER_SECOND',
    schema: integer(1, 10_000).default(20),
    doc: 'Messages one live socket may send per second (bursts of twice that); past it the socket is closed with 4029.',
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
  headersTimeoutMs: {
    env: 'HEADERS_TIMEOUT_MS',
    schema: integer(1000, 60 * 60 * 1000).default(10_000),
    doc: 'Time a new connection has to send a whole request head (line and headers); past it 408 and closed.',
  },
  maxHeaderBytes: {
    env: 'MAX_HEADER_BYTES',
    schema: integer(1024, 1024 * KIB).default(16 * KIB),
    doc: 'Largest request head (request line and headers) accepted; past it 431.',
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
  maxJsonDepth: {
    env: 'MAX_JSON_DEPTH',
    schema: integer(1, 10_000).default(64),
    doc: 'Deepest nesting for which a body is flagged as JSON (`isJson`) and shown as a tree; deeper bodies are still captured, shown as raw text.',
  },
  allowedOrigins: {
    env: 'ALLOWED_ORIGINS',
    schema: z
      .string()
      .transform((value) => value.split(',').map((item) => item.trim().replace(/\/+$/, '')).filter(Boolean))
      .pipe(z.array(z.string().url()))
      .default([]),
    doc: 'Extra browser origins allowed to open live sockets (comma-separated). The page\'s own origin (and PUBLIC_URL\'s) is always allowed; clients that send no Origin (curl, scripts) are too.',
  },
  tlsCertFile: { env: 'TLS_CERT_FILE', schema: z.string().min(1).optional(), doc: 'PEM certificate (chain) file: serve HTTPS directly. Needs TLS_KEY_FILE.' },
  tlsKeyFile: { env: 'TLS_KEY_FILE', schema: z.string().min(1).optional(), doc: 'PEM private key file for TLS_CERT_FILE.' },
  logLevel: {
    env: 'LOG_LEVEL',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    doc: 'pino log level. Per-request lines are logged at `debug`.',
  },
} as const;

type Settings = typeof settings;
export type Config = Readonly<{ [K in keyof Settings]: z.output<Settings[K]['schema']> }>;

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
  for (const [key, setting] of Object.entries(settings)) {
    const flag = toFlag(setting.env);
    const raw = flags[flag] ?? emptyToUndefined(env[setting.env]);
    const parsed = (setting.schema as z.ZodType).safeParse(raw);
    if (parsed.success) {
      result[key] = parsed.data;
    } else {
      const source = flags[flag] !== undefined ? `--${flag}` : setting.env;
      problems.push(`${source}=${JSON.stringify(raw)}: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
    }
  }
  const config = result as Config;
  if (problems.length === 0 && config.maxBodyBytes > config.readLimitBytes) {
    problems.push(`MAX_BODY_BYTES (${config.maxBodyBytes}) must not exceed READ_LIMIT_BYTES (${config.readLimitBytes})`);
  }
  if (problems.length === 0 && config.keptMaxBodyBytes > config.readLimitBytes) {
    problems.push(`KEPT_MAX_BODY_BYTES (${config.keptMaxBodyBytes}) must not exceed READ_LIMIT_BYTES (${config.readLimitBytes})`);
  }
  if (problems.length === 0) problems.push(...checkBudgets(config));
  if (problems.length === 0 && (config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined)) {
    problems.push('TLS_CERT_FILE and TLS_KEY_FILE go together: set both or neither');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** Config for tests and embedders: defaults, with the given overrides. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  return Object.freeze({ ...loadConfig({}, []), ...overrides });
}

/**
 * The budgets must fit the largest record a request can make, or one request could empty an
 * endpoint's log or force a watcher that keeps up to disconnect.
 */
function checkBudgets(config: Config): string[] {
  const problems: string[] = [];
  const largest = maxRecordBytes({ maxBodyBytes: Math.max(config.maxBodyBytes, config.keptMaxBodyBytes), maxHeaderBytes: config.maxHeaderBytes });
  if (config.maxStoredBytesPerEndpoint > config.maxStoredBytes) {
    problems.push(`MAX_STORED_BYTES_PER_ENDPOINT (${config.maxStoredBytesPerEndpoint}) must not exceed MAX_STORED_BYTES (${config.maxStoredBytes})`);
  }
  if (config.maxStoredBytesPerEndpoint < largest) {
    problems.push(`MAX_STORED_BYTES_PER_ENDPOINT (${config.maxStoredBytesPerEndpoint}) must hold the largest record MAX_BODY_BYTES and MAX_HEADER_BYTES allow (${largest} bytes)`);
  }
  if (config.maxSocketBufferBytes < 2 * largest) {
    problems.push(`MAX_SOCKET_BUFFER_BYTES (${config.maxSocketBufferBytes}) must be at least twice the largest record MAX_BODY_BYTES and MAX_HEADER_BYTES allow (2 × ${largest} bytes)`);
  }
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    problems.push(`HEADERS_TIMEOUT_MS (${config.headersTimeoutMs}) must not exceed REQUEST_TIMEOUT_MS (${config.requestTimeoutMs})`);
  }
  return problems;
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
