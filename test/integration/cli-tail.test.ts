import { createHmac } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { ensureCliBuilt, startCli, type CliRun } from '../helpers/cli.js';
import { send } from '../helpers/http.js';
import { SocketClient } from '../helpers/socket-client.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('hookwatch tail', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  beforeAll(() => ensureCliBuilt(), 120_000);

  async function setup() {
    const s: TestServer = await startServer();
    cleanups.push(s.close);
    const { client, welcome } = await SocketClient.create(s.wsUrl);
    cleanups.push(() => client.close());
    const { id, key, url } = welcome.endpoint;
    return { s, client, key, url, link: `${s.baseUrl}/#${id}.${key}` };
  }
  function cli(args: string[], options: Parameters<typeof startCli>[1] = {}): CliRun {
    const run = startCli(args, options);
    cleanups.push(() => run.stop('SIGKILL'));
    return run;
  }

  it('--json prints each captured record as one parseable line, equal to what the page gets', async () => {
    const { client, link, url, key } = await setup();
    const run = cli(['tail', link, '--json']);
    await run.waitFor('stderr', /watching endpoint/);
    await send(`${url}/a?x=1&x=2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    await send(`${url}/bin`, { method: 'PUT', body: Buffer.from([0, 255, 1, 254]) });

    const lines = await run.waitForLines('stdout', /^\{/, 2);
    const records = lines.map((line) => JSON.parse(line) as CapturedRequest);
    expect(records).toEqual(await client.requests(2));
    expect(records[1]?.bodyEncoding).toBe('base64');
    expect(run.stdout() + run.stderr()).not.toContain(key);

    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('prints one line per request, and with -v the headers and body; reads the link from stdin', async () => {
    const { link, url } = await setup();
    const plain = cli(['tail', link]);
    const verbose = cli(['tail', '-', '-v'], { stdin: `${link}\n` });
    await plain.waitFor('stderr', /watching endpoint/);
    await verbose.waitFor('stderr', /watching endpoint/);
    await send(`${url}/github/push?x=1`, {
      method: 'POST',
      headers: { 'X-Event': 'push' },
      body: 'hello\n\u001b[31mred',
    });
    await send(url, { method: 'POST', body: Buffer.from([0xff, 0xfe, 0x00]) });

    const lines = await plain.waitForLines('stdout', /^#\d/, 2);
    expect(lines[0]).toMatch(/^#1 \d\d:\d\d:\d\d\.\d{3} POST \/github\/push\?x=1 14 B$/);
    expect(lines[1]).toMatch(/^#2 \d\d:\d\d:\d\d\.\d{3} POST \/ 3 B$/);

    await verbose.waitFor('stdout', /binary body, 3 B/);
    const text = verbose.stdout();
    expect(text).toContain('    X-Event: push');
    // The escape character from the body is shown, not obeyed by the terminal.
    expect(text).toContain('    hello\n    \\x1b[31mred');
    expect(text).not.toContain('\u001b');
  });

  it('--from-seq replays the stored requests after it', async () => {
    const { link, url } = await setup();
    for (const body of ['one', 'two', 'three']) await send(url, { method: 'POST', body });
    const run = cli(['tail', link, '--json', '--from-seq', '1']);
    const lines = await run.waitForLines('stdout', /^\{/, 2);
    expect(lines.map((line) => (JSON.parse(line) as CapturedRequest).body)).toEqual(['two', 'three']);
  });

  it('--verify prints a verdict under each request, in arrival order, and --json carries it as "signature"', async () => {
    const { link, url } = await setup();
    const secret = 'tail-secret-456';
    const plain = cli(['tail', link, '--verify', `auto:${secret}`]);
    const json = cli(['tail', link, '--json', '--verify', 'github:env:TAIL_SECRET'], { env: { TAIL_SECRET: secret } });
    await plain.waitFor('stderr', /watching endpoint/);
    await json.waitFor('stderr', /watching endpoint/);
    // An inline secret works, with a word about the process list.
    expect(plain.stderr()).toMatch(/visible to other users of this machine \(ps\); --verify <sender>:env:<NAME>/);
    expect(json.stderr()).not.toMatch(/visible to other users/);

    const body = '{"ref":"main"}';
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    await send(url, { method: 'POST', headers: { 'X-Hub-Signature-256': signature }, body });
    await send(url, { method: 'POST', headers: { 'X-Hub-Signature-256': signature }, body: `${body} ` });
    await send(url, { method: 'POST', body: 'unsigned' });

    await plain.waitForLines('stdout', /^ {2}signature: /, 3);
    const lines = plain.stdout().trimEnd().split('\n');
    expect(lines.filter((_, i) => i % 2 === 0).map((line) => line.split(' ')[0])).toEqual(['#1', '#2', '#3']);
    expect(lines[1]).toBe('  signature: valid (github)');
    // Only the start of the expected signature: the whole of it would let anyone replay the body.
    expect(lines[3]).toMatch(/^ {2}signature: mismatch \(github\): expected sha256=[0-9a-f]{5}…, got sha256=/);
    expect(lines[5]).toBe(
      '  signature: not checked: no sender recognised from the headers; name one with --verify <sender>:…',
    );

    const records = (await json.waitForLines('stdout', /^\{/, 3)).map(
      (line) => JSON.parse(line) as CapturedRequest & { signature: { reason: string; ok: boolean; expected?: string } },
    );
    expect(records.map((record) => [record.seq, record.signature.reason])).toEqual([
      [1, 'valid'],
      [2, 'mismatch'],
      [3, 'missing-header'],
    ]);
    expect(records[1]?.signature.expected).toMatch(/^sha256=[0-9a-f]{5}…$/);
    for (const run of [plain, json]) expect(run.stdout()).not.toContain(secret);
  });
});
