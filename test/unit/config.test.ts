import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { maxRecordBytes } from '../../src/capture/record-bounds.js';
import { ConfigError, groups, loadConfig, settings, type Config, type SettingValues } from '../../src/config.js';

const MIB = 1024 * 1024;

/** The problems loadConfig reports, or [] when it starts. */
function problemsOf(env: Record<string, string>, argv: string[] = []): string[] {
  try {
    loadConfig(env, argv);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

/** Every setting by its key, across the groups: the cross-setting rules span them. */
function valuesOf(config: Config): SettingValues {
  return Object.assign({}, ...Object.values(config)) as SettingValues;
}

function largestRecord(config: SettingValues): number {
  return maxRecordBytes({
    maxBodyBytes: Math.max(config.maxBodyBytes, config.keptMaxBodyBytes),
    maxHeaderBytes: config.maxHeaderBytes,
  });
}

/** Every cross-setting rule loadConfig enforces, checked on a config that started. */
function expectConsistent(config: SettingValues): void {
  expect(config.maxBodyBytes).toBeLessThanOrEqual(config.readLimitBytes);
  expect(config.keptMaxBodyBytes).toBeLessThanOrEqual(config.readLimitBytes);
  expect(config.maxStoredBytesPerEndpoint).toBeLessThanOrEqual(config.maxStoredBytes);
  expect(config.maxStoredBytesPerEndpoint).toBeGreaterThanOrEqual(largestRecord(config));
  expect(config.maxSocketBufferBytes).toBeGreaterThanOrEqual(2 * largestRecord(config));
  expect(config.headersTimeoutMs).toBeLessThanOrEqual(config.requestTimeoutMs);
}

describe('config', () => {
  it('has documented defaults', () => {
    const config = loadConfig({}, []);
    expect(config.server).toMatchObject({ port: 8080, trustProxy: false });
    expect(config.requestLimits).toMatchObject({ maxBodyBytes: 1024 * 1024, readLimitBytes: 10 * 1024 * 1024 });
    expect(config.endpointLimits.requestsPerEndpoint).toBe(50);
    expect(config.endpoints.graceMs).toBe(30_000);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.server)).toBe(true);
  });

  it('reads env, and flags win over env', () => {
    const config = loadConfig({ PORT: '9000', GRACE_MS: '0', TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }, [
      '--port',
      '9100',
      '--public-url=https://hooks.example.com/',
    ]);
    expect(config.server.port).toBe(9100);
    expect(config.endpoints.graceMs).toBe(0);
    expect(config.server.trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(config.server.publicUrl).toBe('https://hooks.example.com');
  });

  it('names every bad setting in one error', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', MAX_BODY_BYTES: '-1', LOG_LEVEL: 'loud', PUBLIC_URL: 'ftp://x' }, []);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['PORT', 'MAX_BODY_BYTES', 'LOG_LEVEL', 'PUBLIC_URL']) expect(problems).toContain(name);
  });

  it('rejects unknown flags and a stored cap above the read limit', () => {
    expect(() => loadConfig({}, ['--no-such-flag', '1'])).toThrow(ConfigError);
    expect(() => loadConfig({ MAX_BODY_BYTES: '2000', READ_LIMIT_BYTES: '1000' }, [])).toThrow(
      /must not exceed READ_LIMIT_BYTES/,
    );
  });

  it('takes exactly one way to reach Redis, and host:port lists for sentinels and cluster nodes', () => {
    const sentinel = loadConfig({ REDIS_SENTINELS: '10.0.0.1:26379, [::1]:26380', REDIS_SENTINEL_NAME: 'hooks' }, []);
    expect(sentinel.redis.redisSentinels).toEqual([
      { host: '10.0.0.1', port: 26379 },
      { host: '::1', port: 26380 },
    ]);
    expect(sentinel.redis.redisPartitions).toBe(1);
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'a:7000,b:7001' }, []).redis.redisPartitions).toBe(48);
    expect(() => loadConfig({ REDIS_URL: 'redis://x:6379', REDIS_CLUSTER_NODES: 'a:7000' }, [])).toThrow(
      /REDIS_URL and REDIS_CLUSTER_NODES are each a way to reach Redis: set exactly one/,
    );
    expect(() => loadConfig({ REDIS_SENTINELS: 'a:26379', REDIS_CLUSTER_NODES: 'a:7000' }, [])).toThrow(
      /set exactly one/,
    );
    expect(() => loadConfig({ REDIS_SENTINELS: 'just-a-host' }, [])).toThrow(/REDIS_SENTINELS.*host:port pairs/s);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a:99999' }, [])).toThrow(/REDIS_CLUSTER_NODES/);
  });

  it('puts every setting in one group, and gives each group as its own slice', () => {
    const grouped = Object.values(groups).flatMap((group) => Object.keys(group.settings));
    expect(grouped.toSorted()).toEqual(Object.keys(settings).toSorted());
    const config = loadConfig({}, []);
    expect(Object.keys(config)).toEqual(Object.keys(groups));
    for (const [name, group] of Object.entries(groups))
      expect(Object.keys(config[name as keyof Config])).toEqual(Object.keys(group.settings));
  });

  describe('a default that depends on another setting follows it', () => {
    it('READ_LIMIT_BYTES alone lowers both stored body caps', () => {
      const config = valuesOf(loadConfig({ READ_LIMIT_BYTES: '8192' }, []));
      expect(config.readLimitBytes).toBe(8192);
      expect(config.keptMaxBodyBytes).toBeLessThanOrEqual(8192);
      expect(config.maxBodyBytes).toBeLessThanOrEqual(8192);
      expectConsistent(config);
    });

    it('REQUEST_TIMEOUT_MS alone lowers HEADERS_TIMEOUT_MS', () => {
      const config = valuesOf(loadConfig({ REQUEST_TIMEOUT_MS: '1000' }, []));
      expect(config.requestTimeoutMs).toBe(1000);
      expect(config.headersTimeoutMs).toBeLessThanOrEqual(1000);
    });

    it('HEADERS_TIMEOUT_MS alone raises REQUEST_TIMEOUT_MS', () => {
      const config = valuesOf(loadConfig({}, ['--headers-timeout-ms', '120000']));
      expect(config.headersTimeoutMs).toBe(120_000);
      expect(config.requestTimeoutMs).toBeGreaterThanOrEqual(120_000);
    });

    it('MAX_BODY_BYTES or KEPT_MAX_BODY_BYTES alone raises the read limit and the budgets that must hold it', () => {
      for (const env of [{ MAX_BODY_BYTES: String(64 * MIB) }, { KEPT_MAX_BODY_BYTES: String(20 * MIB) }]) {
        const config = valuesOf(loadConfig(env, []));
        expect(Math.max(config.maxBodyBytes, config.keptMaxBodyBytes)).toBe(Number(Object.values(env)[0]));
        expectConsistent(config);
      }
    });

    it('MAX_HEADER_BYTES alone raises the socket buffer', () => {
      const config = valuesOf(loadConfig({ MAX_HEADER_BYTES: String(MIB) }, []));
      expect(config.maxHeaderBytes).toBe(MIB);
      expectConsistent(config);
    });

    it('MAX_STORED_BYTES alone lowers the per-endpoint budget (and what one record may take)', () => {
      for (const bytes of [16 * MIB, 2 * MIB, MIB]) {
        const config = valuesOf(loadConfig({ MAX_STORED_BYTES: String(bytes) }, []));
        expect(config.maxStoredBytes).toBe(bytes);
        expectConsistent(config);
      }
    });

    it('MAX_STORED_BYTES_PER_ENDPOINT alone raises the total budget, or lowers what one record may take', () => {
      for (const bytes of [512 * MIB, 2 * MIB]) {
        const config = valuesOf(loadConfig({ MAX_STORED_BYTES_PER_ENDPOINT: String(bytes) }, []));
        expect(config.maxStoredBytesPerEndpoint).toBe(bytes);
        expectConsistent(config);
      }
    });

    it('MAX_SOCKET_BUFFER_BYTES alone lowers what one record may take', () => {
      const config = valuesOf(loadConfig({ MAX_SOCKET_BUFFER_BYTES: String(4 * MIB) }, []));
      expect(config.maxSocketBufferBytes).toBe(4 * MIB);
      expectConsistent(config);
    });

    it('every numeric setting alone, at either end of its range, starts', () => {
      const failures: string[] = [];
      for (const setting of Object.values(settings)) {
        const schema = setting.schema instanceof z.ZodDefault ? setting.schema.def.innerType : setting.schema;
        if (!(schema instanceof z.ZodNumber) || schema.minValue === null || schema.maxValue === null) continue;
        for (const value of [schema.minValue, schema.maxValue]) {
          const problems = problemsOf({ [setting.env]: String(value) });
          if (problems.length > 0) failures.push(`${setting.env}=${value}: ${problems.join('; ')}`);
        }
      }
      expect(failures).toEqual([]);
    });

    it('still refuses two set values that conflict, naming both', () => {
      const cases: [Record<string, string>, string[]][] = [
        [{ READ_LIMIT_BYTES: '8192', KEPT_MAX_BODY_BYTES: '65536' }, ['READ_LIMIT_BYTES', 'KEPT_MAX_BODY_BYTES']],
        [{ READ_LIMIT_BYTES: '8192', MAX_BODY_BYTES: '65536' }, ['READ_LIMIT_BYTES', 'MAX_BODY_BYTES']],
        [{ REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '10000' }, ['REQUEST_TIMEOUT_MS', 'HEADERS_TIMEOUT_MS']],
        [
          { MAX_STORED_BYTES: String(16 * MIB), MAX_STORED_BYTES_PER_ENDPOINT: String(32 * MIB) },
          ['MAX_STORED_BYTES', 'MAX_STORED_BYTES_PER_ENDPOINT'],
        ],
        [
          { MAX_STORED_BYTES_PER_ENDPOINT: String(2 * MIB), MAX_BODY_BYTES: String(8 * MIB) },
          ['MAX_STORED_BYTES_PER_ENDPOINT', 'MAX_BODY_BYTES'],
        ],
        [
          { MAX_STORED_BYTES: String(16 * MIB), MAX_BODY_BYTES: String(32 * MIB) },
          ['MAX_STORED_BYTES', 'MAX_BODY_BYTES'],
        ],
        [
          { MAX_SOCKET_BUFFER_BYTES: String(16 * MIB), MAX_BODY_BYTES: String(64 * MIB) },
          ['MAX_SOCKET_BUFFER_BYTES', 'MAX_BODY_BYTES'],
        ],
      ];
      for (const [env, names] of cases) {
        const problems = problemsOf(env).join('\n');
        for (const name of names) expect(problems, JSON.stringify(env)).toMatch(new RegExp(`\\b${name}\\b`));
      }
      // A flag counts as set just as env does.
      expect(problemsOf({}, ['--request-timeout-ms=1000', '--headers-timeout-ms=10000']).join('\n')).toMatch(
        /HEADERS_TIMEOUT_MS.*REQUEST_TIMEOUT_MS/,
      );
    });
  });
});
