import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { replayUrl, shellQuote, toCurl, truncationNote } from '../../src/shared/to-curl.js';
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
    const command = toCurl(
      { ...base, body: Buffer.from([0, 255, 39]).toString('base64'), bodyEncoding: 'base64', storedSize: 3 },
      'http://x/',
    );
    expect(command.startsWith("printf %s 'AP8n' | base64 -d | curl -X 'POST' 'http://x/'")).toBe(true);
    expect(command.endsWith('--data-binary @-')).toBe(true);
  });

  it('uses --head for HEAD and no -X for a bodiless GET', () => {
    const get = { ...base, method: 'GET', headers: [], body: '', storedSize: 0, size: 0 };
    expect(toCurl(get, 'http://x/')).toBe("curl 'http://x/' -H 'User-Agent:' -H 'Accept:'");
    expect(toCurl({ ...get, method: 'HEAD' }, 'http://x/')).toBe(
      "curl --head 'http://x/' -H 'User-Agent:' -H 'Accept:'",
    );
  });
});

interface Arrival {
  exit: number | null;
  stderr: string;
  method?: string;
  /** rawHeaders: name, value, name, value, … */
  headers?: string[];
  body?: Buffer;
}

/**
 * Writes the command `toCurl` makes for `record` to a script (the command itself may be
 * megabytes, too big for `bash -c`), runs it with bash against a local server, and returns
 * what arrived.
 */
async function replayWithBash(record: CapturedRequest): Promise<Arrival> {
  let arrived: Omit<Arrival, 'exit' | 'stderr'> = {};
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      arrived = { method: req.method, headers: req.rawHeaders, body: Buffer.concat(chunks) };
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dir = await mkdtemp(join(tmpdir(), 'hookwatch-curl-'));
  try {
    const { port } = server.address() as AddressInfo;
    const script = join(dir, 'replay.sh');
    await writeFile(script, `${toCurl(record, `http://127.0.0.1:${port}/hook`)}\n`);
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    const exit = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { exit, stderr, ...arrived };
  } finally {
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** About `bytes` of JSON-ish text with everything a shell could trip on: quotes, $, `, \\, CRLF, tabs, non-ASCII, the here-document's delimiter. */
function awkwardText(bytes: number, end: string): string {
  const line = `{"it's":"$HOME \`ls\` \\\\ \\"q\\" \t é 漢 🙂","n":1}\r\n`;
  return `HOOKWATCH_BODY\nHOOKWATCH_BODY_1\n${line.repeat(Math.ceil(bytes / Buffer.byteLength(line)))}'${end}`;
}

const BIG = 2.2 * 1024 * 1024;

describe('toCurl with big bodies (run with bash and curl against a local server)', () => {
  it('sends a 2.2 MB text body byte for byte, not as one argument (Argument list too long)', async () => {
    const body = awkwardText(BIG, 'no newline at the end');
    const record = capturedRequest({
      body,
      headers: [
        ['Content-Type', 'application/json'],
        ['X-Dup', 'a'],
        ['X-Dup', "b $& $' $`"],
      ],
    });
    expect(toCurl(record, 'http://x/')).not.toContain('--data-raw');
    const arrived = await replayWithBash(record);
    expect(arrived.exit, arrived.stderr).toBe(0);
    expect(arrived.method).toBe('POST');
    expect(arrived.headers?.filter((_, i, all) => all[i - 1] === 'X-Dup')).toEqual(['a', "b $& $' $`"]);
    expect(arrived.body?.length).toBe(Buffer.byteLength(body));
    expect(arrived.body?.equals(Buffer.from(body))).toBe(true);
  }, 30_000);

  it('sends a big text body that ends in a newline byte for byte', async () => {
    const body = awkwardText(200 * 1024, '\n\n');
    const arrived = await replayWithBash(capturedRequest({ body }));
    expect(arrived.exit, arrived.stderr).toBe(0);
    expect(arrived.body?.equals(Buffer.from(body))).toBe(true);
  }, 30_000);

  it('sends a 2.2 MB binary body byte for byte through base64 -d', async () => {
    const bytes = randomBytes(BIG);
    const arrived = await replayWithBash(
      capturedRequest({
        body: bytes.toString('base64'),
        bodyEncoding: 'base64',
        isJson: false,
        size: bytes.length,
        storedSize: bytes.length,
      }),
    );
    expect(arrived.exit, arrived.stderr).toBe(0);
    expect(arrived.body?.equals(bytes)).toBe(true);
  }, 30_000);

  it('keeps a small body as one --data-raw argument', () => {
    const body = 'x'.repeat(60 * 1024);
    expect(toCurl(capturedRequest({ body }), 'http://x/').endsWith(`--data-raw '${body}'`)).toBe(true);
  });
});

describe('toCurl with a truncated body', () => {
  const truncated = capturedRequest({
    body: '{"a":"b',
    size: 20_000_000,
    storedSize: 7,
    truncated: true,
    isJson: false,
  });
  const note = 'Hookwatch stored only the first 7 of 20000000 bytes of this body: the command sends those.';

  it('starts the command with a comment saying what was kept, and sends that', async () => {
    expect(toCurl(truncated, 'http://x/').split('\n')[0]).toBe(`# ${note}`);
    const arrived = await replayWithBash(truncated);
    expect(arrived.exit, arrived.stderr).toBe(0);
    expect(arrived.body?.toString()).toBe('{"a":"b');
  });

  it('exports the same sentence for the page, and nothing for a whole body', () => {
    expect(truncationNote(truncated)).toBe(note);
    expect(truncationNote(base)).toBeUndefined();
    expect(toCurl(base, 'http://x/')).not.toContain('#');
  });
});
