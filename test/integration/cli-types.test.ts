import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, runCli, startCli } from '../helpers/cli.js';
import { compileWithBodies, loadZodSchema } from '../helpers/generated-types.js';
import { send } from '../helpers/http.js';
import { SocketClient } from '../helpers/socket-client.js';
import { startServer, type TestServer } from '../helpers/server.js';

const BODIES = [
  '{"id":1,"type":"a","data":{"name":"x"}}',
  '{"id":2,"type":"b","data":{"name":"y","email":"y@example.com"},"big":18446744073709551615}',
  '{"id":3,"type":"c","data":{"name":null},"tags":["t"]}',
];

describe('hookwatch types and tail attempt numbers', () => {
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
    return { client, key, url, link: `${s.baseUrl}/#${id}.${key}` };
  }

  it('prints a TS type, a zod schema and a JSON Schema that accept every JSON body held, honouring --filter', async () => {
    const { client, link, url, key } = await setup();
    for (const body of BODIES)
      await send(`${url}/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await send(`${url}/other`, { method: 'POST', body: 'not json' });
    await send(`${url}/other`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"unrelated":true}',
    });
    await client.requests(5);

    const ts = await runCli(['types', link, '--path', '/events']);
    expect(ts.code).toBe(0);
    expect(ts.stderr).toContain('typed 3 JSON bodies of 3 request(s) chosen (5 held)');
    expect(ts.stdout).toContain('export type WebhookBody = {');
    expect(ts.stdout).toMatch(/email\?: string;/);
    expect(ts.stdout).toContain('integers past 2^53 seen (e.g. 18446744073709551615)');
    expect(ts.stdout).not.toContain('unrelated');
    expect(ts.stdout + ts.stderr).not.toContain(key);
    expect(await compileWithBodies(ts.stdout, BODIES)).toBe('');

    const zod = await runCli(['types', link, '--filter', '"type"', '--format', 'zod', '--name', 'Event']);
    expect(zod.code).toBe(0);
    const schema = loadZodSchema(zod.stdout, 'Event');
    for (const body of BODIES) expect(schema.safeParse(JSON.parse(body)).success).toBe(true);

    const jsonSchema = await runCli(['types', link, '--filter', 'email', '--format', 'json-schema']);
    expect(JSON.parse(jsonSchema.stdout)).toMatchObject({ type: 'object', required: ['id', 'type', 'data', 'big'] });
  });

  it('refuses a bad format or name, and says when nothing is JSON', async () => {
    const { link, url, client } = await setup();
    expect((await runCli(['types', link, '--format', 'flow'])).stderr).toContain('--format takes ts, zod, json-schema');
    expect((await runCli(['types', link, '--name', 'not a name'])).code).toBe(2);
    await send(url, { method: 'POST', body: 'plain' });
    await client.requests(1);
    const none = await runCli(['types', link]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no JSON bodies among the 1 request(s)');
    const gone = await runCli(['types', link.replace(/\.[^.]+$/, '.wrongkey')]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('does not exist');
  });

  it("tail prints each attempt's number: three attempts with one webhook-id, and a body sent twice", async () => {
    const { link, url } = await setup();
    const run = startCli(['tail', link]);
    cleanups.push(() => run.stop('SIGKILL'));
    const json = startCli(['tail', link, '--json']);
    cleanups.push(() => json.stop('SIGKILL'));
    await run.waitFor('stderr', /watching endpoint/);
    await json.waitFor('stderr', /watching endpoint/);
    for (let i = 0; i < 3; i++)
      await send(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'webhook-id': 'msg_2Lx' },
        body: '{"type":"invoice.paid"}',
      });
    await send(`${url}/plain`, { method: 'POST', body: 'same' });
    await send(`${url}/plain`, { method: 'POST', body: 'same' });
    const lines = await run.waitForLines('stdout', /^#\d/, 5);
    expect(lines.map((line) => `${/^#(\d+)/.exec(line)?.[1]} ${/· attempt.*$/.exec(line)?.[0] ?? ''}`.trim())).toEqual([
      '1 · attempt 1 (webhook-id msg_2Lx)',
      '2 · attempt 2 (webhook-id msg_2Lx)',
      '3 · attempt 3 (webhook-id msg_2Lx)',
      '4',
      '5 · attempt 2 (same body)',
    ]);
    const records = (await json.waitForLines('stdout', /^\{/, 5)).map(
      (line) => JSON.parse(line) as { seq: number; attempt?: number },
    );
    expect(records.map((record) => record.attempt)).toEqual([1, 2, 3, undefined, 2]);
  });
});
