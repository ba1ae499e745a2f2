import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, settings, toFlag } from '../../src/config.js';

describe('config', () => {
  it('has documented defaults', () => {
    const config = loadConfig({}, []);
    expect(config).toMatchObject({
      port: 8080,
      maxBodyBytes: 1024 * 1024,
      readLimitBytes: 10 * 1024 * 1024,
      requestsPerEndpoint: 50,
      graceMs: 30_000,
      trustProxy: false,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads env, and flags win over env', () => {
    const config = loadConfig({ PORT: '9000', GRACE_MS: '0', TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }, ['--port', '9100', '--public-url=https://hooks.example.com/']);
    expect(config.port).toBe(9100);
    expect(config.graceMs).toBe(0);
    expect(config.trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(config.publicUrl).toBe('https://hooks.example.com');
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
    expect(() => loadConfig({ MAX_BODY_BYTES: '2000', READ_LIMIT_BYTES: '1000' }, [])).toThrow(/must not exceed READ_LIMIT_BYTES/);
  });

  it('is documented setting by setting in the README', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    for (const setting of Object.values(settings)) {
      expect(readme).toContain(`\`${setting.env}\``);
      expect(readme).toContain(`\`--${toFlag(setting.env)}\``);
    }
  });
});
