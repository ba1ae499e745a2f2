import { describe, expect, it } from 'vitest';
import { toRequestDraft, type RawCapture } from '../../src/capture/to-record.js';
import { replayUrl, toCurl } from '../../src/shared/to-curl.js';
import { createUtcTimeFormatter } from '../../src/capture/utc-time.js';

const options = { maxJsonDepth: 64, formatTime: createUtcTimeFormatter() };
const kept: RawCapture = {
  method: 'POST',
  url: '/api/webhook-endpoint/abc/x',
  endpointPath: '/api/webhook-endpoint/abc',
  rawHeaders: [],
  body: Buffer.from(''),
  size: 0,
  truncated: false,
  remoteAddress: '127.0.0.1',
  receivedAtMs: 0,
  redact: new Set(),
};
const keptWith = (raw: Partial<RawCapture>) => toRequestDraft({ ...kept, ...raw }, options);

describe('kept endpoints redact secret header values', () => {
  it.each([
    'Authorization',
    'Proxy-Authorization',
    'Cookie',
    'X-Api-Key',
    'Api-Key',
    'X-Auth-Token',
    'Stripe-Signature',
    'X-Hub-Signature-256',
    'X-Shopify-Hmac-Sha256',
    'X-Authorization',
    'Authentication',
    'Apikey',
    'X-Apikey',
    'Api_Key',
    'X-Api_Key',
    'X-Secret-Key',
    'X-Access-Key',
    'X-Auth',
    'X-Password',
    'Token',
    'Secret',
    'Ocp-Apim-Subscription-Key',
    'X-Functions-Key',
    'X-Gitlab-Token',
    'X-Amz-Security-Token',
    'X-Session-Id',
    'X-Client-Secret',
    'X-Sig',
  ])('%s', (name) => {
    const request = keptWith({ rawHeaders: [name, 's3cret', 'X-Plain', 'b'] });
    expect(request.headers).toEqual([
      [name, '[redacted]'],
      ['X-Plain', 'b'],
    ]);
    expect(request.redacted).toEqual([name]);
  });

  it.each([
    'Content-Type',
    'Keep-Alive',
    'Idempotency-Key',
    'X-GitHub-Delivery',
    'X-GitHub-Event',
    'X-Request-Id',
    'User-Agent',
    'Monkey',
    'Keyboard',
    'X-Key-Id',
    'Accept',
    'X-Forwarded-For',
  ])('but not %s', (name) => {
    const request = keptWith({ rawHeaders: [name, 'visible'] });
    expect(request.headers).toEqual([[name, 'visible']]);
    expect(request.redacted).toEqual([]);
  });
});

describe('kept endpoints redact secret query values', () => {
  it.each([
    'token',
    'api_key',
    'api-key',
    'apikey',
    'apiKey',
    'access_token',
    'accessToken',
    'refresh_token',
    'sig',
    'signature',
    'sign',
    'hmac',
    'hub.verify_token',
    'client_secret',
    'secret',
    'password',
    'passwd',
    'pwd',
    'auth',
    'key',
    'code',
    'session',
    'sessionid',
    'X-Amz-Signature',
    'X-Amz-Security-Token',
    'X-Amz-Credential',
    'credential',
    'subscription-key',
    'jwt',
  ])('%s', (name) => {
    const request = keptWith({ url: `/api/webhook-endpoint/abc/x?page=2&${name}=s3cret%2Fv&event=push` });
    expect(request.url).toBe(`/api/webhook-endpoint/abc/x?page=2&${name}=%5Bredacted%5D&event=push`);
    expect(request.subPath).toBe('/x');
    expect({ ...request.query }).toEqual({ page: '2', [name]: '[redacted]', event: 'push' });
    expect(request.redactedQuery).toEqual([name]);
  });

  it.each([
    'page',
    'event',
    'monkey',
    'keyboard',
    'hub.mode',
    'hub.challenge',
    'validationToken',
    'idempotency_key',
    'id',
    'type',
    'keep',
  ])('but not %s', (name) => {
    const request = keptWith({ url: `/api/webhook-endpoint/abc/x?${name}=visible` });
    expect(request.url).toBe(`/api/webhook-endpoint/abc/x?${name}=visible`);
    expect({ ...request.query }).toEqual({ [name]: 'visible' });
    expect(request.redactedQuery).toEqual([]);
  });

  it('judges the decoded name, keeps every other byte of the target, and lists each name once', () => {
    const url =
      '/api/webhook-endpoint/abc/x?a=%20b+c&api%5Fkey=k1&token=t1&token=&token=t2&flag&hub.challenge=c%3D&Sig=z';
    const request = keptWith({ url });
    expect(request.url).toBe(
      '/api/webhook-endpoint/abc/x?a=%20b+c&api%5Fkey=%5Bredacted%5D&token=%5Bredacted%5D&token=&token=%5Bredacted%5D&flag&hub.challenge=c%3D&Sig=%5Bredacted%5D',
    );
    expect({ ...request.query }).toEqual({
      a: ' b c',
      api_key: '[redacted]',
      token: ['[redacted]', '', '[redacted]'],
      flag: '',
      'hub.challenge': 'c=',
      Sig: '[redacted]',
    });
    expect(request.redactedQuery).toEqual(['api_key', 'token', 'Sig']);
  });

  it('writes a cURL replay that curl can run (no [ ] glob in the URL)', () => {
    const request = { ...keptWith({ url: '/api/webhook-endpoint/abc/x?token=t1&a=1' }), seq: 1 };
    const command = toCurl(request, replayUrl(request, 'https://h.example/api/webhook-endpoint/abc'));
    expect(command).toContain(`'https://h.example/api/webhook-endpoint/abc/x?token=%5Bredacted%5D&a=1'`);
    expect(command).not.toContain('t1');
  });
});

describe('kept endpoints redact the user-info of an absolute-form target', () => {
  it.each([
    [
      'http://user:pw@h.example/api/webhook-endpoint/abc/x?y=1',
      'http://%5Bredacted%5D@h.example/api/webhook-endpoint/abc/x?y=1',
    ],
    [
      'http://tok3n@h.example:8080/api/webhook-endpoint/abc/x',
      'http://%5Bredacted%5D@h.example:8080/api/webhook-endpoint/abc/x',
    ],
    [
      'https://a:b@c@h.example/api/webhook-endpoint/abc/x?token=t&u=v@w',
      'https://%5Bredacted%5D@h.example/api/webhook-endpoint/abc/x?token=%5Bredacted%5D&u=v@w',
    ],
    ['http://h.example/api/webhook-endpoint/abc/x?u=a@b', 'http://h.example/api/webhook-endpoint/abc/x?u=a@b'],
  ])('%s', (url, stored) => {
    const request = keptWith({ url });
    expect(request.url).toBe(stored);
    expect(request.subPath).toBe('/x');
  });
});

describe('live endpoints redact nothing', () => {
  it('keeps headers, query and user-info as sent, with no redaction lists', () => {
    const url = 'http://user:pw@h.example/api/webhook-tester/abc/x?token=t1';
    const request = toRequestDraft(
      { ...kept, url, endpointPath: '/api/webhook-tester/abc', rawHeaders: ['Authorization', 'a'], redact: undefined },
      options,
    );
    expect(request.url).toBe(url);
    expect({ ...request.query }).toEqual({ token: 't1' });
    expect(request.headers).toEqual([['Authorization', 'a']]);
    expect(request).not.toHaveProperty('redacted');
    expect(request).not.toHaveProperty('redactedQuery');
  });
});
