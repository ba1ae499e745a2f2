import { describe, expect, it } from 'vitest';
import { replayUrl, shellQuote, toCurl } from '../../src/shared/to-curl.js';
import { capturedRequest } from '../helpers/captured.js';

const base = capturedRequest({
  url: '/api/webhook-tester/abc/hooks?x=1&x=2',
  subPath: '/hooks',
  query: { x: ['1', '2'] },
  headers: [
    ['Host', 'example.test'],
    ['User-Agent', 'sender/1'],
    ['Content-Type', 'application/json'],
    ['Content-Length', '9'],
    ['X-Dup', 'a'],
    ['X-Dup', 'b'],
  ],
});

describe('toCurl', () => {
  it('quotes every argument so the shell passes it through literally', () => {
    expect(shellQuote(`it's $HOME \`ls\` "x"`)).toBe(`'it'\\''s $HOME \`ls\` "x"'`);
  });

  it('keeps method, headers in order with duplicates, and the body; drops what curl computes', () => {
    const command = toCurl(base, replayUrl(base, 'https://h.example/api/webhook-tester/new'));
    expect(command).toBe(
      "curl -X 'POST' 'https://h.example/api/webhook-tester/new/hooks?x=1&x=2' -H 'User-Agent: sender/1' -H 'Content-Type: application/json' " +
        "-H 'X-Dup: a' -H 'X-Dup: b' -H 'Accept:' -H 'Expect:' --data-raw '{\"a\":\"b\"}'",
    );
  });

  it('pipes a binary body through base64 -d so it is byte for byte', () => {
    const command = toCurl({ ...base, body: Buffer.from([0, 255, 39]).toString('base64'), bodyEncoding: 'base64', storedSize: 3 }, 'http://x/');
    expect(command.startsWith("printf %s 'AP8n' | base64 -d | curl -X 'POST' 'http://x/'")).toBe(true);
    expect(command.endsWith('--data-binary @-')).toBe(true);
  });

  it('uses --head for HEAD and no -X for a bodiless GET', () => {
    const get = { ...base, method: 'GET', headers: [], body: '', storedSize: 0, size: 0 };
    expect(toCurl(get, 'http://x/')).toBe("curl 'http://x/' -H 'User-Agent:' -H 'Accept:'");
    expect(toCurl({ ...get, method: 'HEAD' }, 'http://x/')).toBe("curl --head 'http://x/' -H 'User-Agent:' -H 'Accept:'");
  });
});
