import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startInstance, type Instance } from '../helpers/instances.js';
import { SocketClient } from '../helpers/socket-client.js';
import { decodeServerMessage } from '../../src/shared/request-frame.js';

/**
 * Findings 4, 5 and 6 of the hardening issue, against a server process: waits (long polls, a
 * sender waiting for its local app's answer) end on time after garbage collections, end when
 * their sender hangs up, are capped per address, and give back every byte they counted.
 */
describe('waiting senders and polls', () => {
  const cleanups: Array<() => Promise<unknown> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function instance(env: Record<string, string> = {}): Promise<Instance> {
    const started = await startInstance(env);
    cleanups.push(() => started.kill());
    return started;
  }

  /** A live endpoint, watched, whose configured answer is 299, with a responder that may answer. */
  async function responded(s: Instance, answerWith?: (seq: number) => { status: number; body: string }) {
    const { client, welcome } = await SocketClient.create(s.wsUrl);
    cleanups.push(() => client.close());
    client.send({
      type: 'set-response',
      response: { status: 299, body: 'configured', contentType: 'text/plain', headers: [], delayMs: 0 },
    });
    await client.next('response');
    const { client: responder } = await SocketClient.join(s.wsUrl, welcome.endpoint.id, welcome.endpoint.key);
    cleanups.push(() => responder.close());
    responder.send({ type: 'claim-responder' });
    await responder.next('responder');
    if (answerWith) {
      responder.socket.on('message', (data, isBinary) => {
        const message = decodeServerMessage(isBinary ? (data as Buffer) : data.toString());
        if (message.type !== 'request' || !message.request) return;
        const { status, body } = answerWith(message.request.seq);
        responder.send({
          type: 'local-answer',
          seq: message.request.seq,
          status,
          headers: [['Content-Type', 'text/plain']],
          body,
          bodyEncoding: 'utf8',
        });
      });
    }
    return { url: welcome.endpoint.url, id: welcome.endpoint.id, key: welcome.endpoint.key };
  }

  it('4: long polls and senders waiting on a silent responder end on time after many 1 MiB captures (garbage collections)', async () => {
    const s = await instance({ RESPOND_TIMEOUT_MS: '3000' });
    const silent = await responded(s);
    const made = await fetch(`${s.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind":"kept"}',
    });
    const kept = (await made.json()) as { id: string; key: string };
    const started = Date.now();
    const polls = Array.from({ length: 10 }, () =>
      fetch(`${s.baseUrl}/api/endpoints/${kept.id}/requests?afterSeq=0&waitMs=3000`, {
        headers: { authorization: `Bearer ${kept.key}` },
      }).then(() => Date.now() - started),
    );
    const senders = Array.from({ length: 10 }, (_, i) =>
      post(silent.url, `wait ${i}`).then((answer) => ({ ...answer, afterMs: Date.now() - started })),
    );
    // Garbage: 60 ordinary 1 MiB captures to another endpoint, while they wait.
    const { client: other, welcome } = await SocketClient.create(s.wsUrl);
    cleanups.push(() => other.close());
    const body = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i < 60; i++) expect((await post(welcome.endpoint.url, body)).status).toBe(200);
    for (const tookMs of await Promise.all(polls)) expect(tookMs).toBeLessThan(15_000);
    for (const answer of await Promise.all(senders)) {
      expect(answer.status).toBe(299);
      expect(answer.afterMs).toBeLessThan(15_000);
    }
  }, 60_000);

  it('5: a sender that hangs up ends its wait, and one address cannot take every waiting place', async () => {
    const s = await instance({
      RESPOND_TIMEOUT_MS: '20000',
      RESPOND_MAX_WAITING: '30',
      RESPOND_MAX_WAITING_PER_ADDRESS: '10',
    });
    const silent = await responded(s);
    // 40 senders that hang up at once: none of them may keep a waiting place.
    await Promise.all(Array.from({ length: 40 }, (_, i) => postAndHangUp(silent.url, `gone ${i}`, '127.0.0.2')));
    // Ten from one address wait; the eleventh from it gets the configured answer at once.
    for (let i = 0; i < 10; i++) void post(silent.url, `held ${i}`, '127.0.0.3').catch(() => undefined);
    await expect
      .poll(async () => (await post(silent.url, 'eleventh', '127.0.0.3')).status, { timeout: 10_000 })
      .toBe(299);
    // A victim on another endpoint, from another address, still gets its local app's answer.
    const answered = await responded(s, (seq) => ({ status: 201, body: `local ${seq}` }));
    const victim = await post(answered.url, 'victim', '127.0.0.4');
    expect([victim.status, victim.headers['x-hookwatch-response']]).toEqual([201, 'forwarded']);
  }, 60_000);

  it('a rule that matches answers before the local app does; the local app answers in place of the default', async () => {
    const s = await instance();
    const e = await responded(s, (seq) => ({ status: 201, body: `local ${seq}` }));
    const { client: tab } = await SocketClient.join(s.wsUrl, e.id, e.key);
    cleanups.push(() => tab.close());
    tab.send({
      type: 'set-response',
      response: {
        status: 299,
        rules: [
          {
            name: 'Slack URL check',
            when: { json: { type: 'url_verification' } },
            answer: { status: 200, contentType: 'text/plain', body: '{{json.challenge}}' },
          },
        ],
      },
    });
    await tab.next('response');
    const check = await post(e.url, JSON.stringify({ type: 'url_verification', challenge: 'c123' }));
    expect([check.status, check.body, check.headers['x-hookwatch-response']]).toEqual([200, 'c123', 'configured']);
    const event = await post(e.url, '{"type":"event_callback"}');
    expect([event.status, event.body, event.headers['x-hookwatch-response']]).toEqual([201, 'local 2', 'forwarded']);
  }, 60_000);

  it('6: local answers to senders that hung up give their bytes back (RESPOND_MAX_BYTES does not leak)', async () => {
    const s = await instance({ RESPOND_MAX_BYTES: String(2 * 1024 * 1024) });
    const big = 'x'.repeat(1000 * 1024);
    const e = await responded(s, () => ({ status: 200, body: big }));
    // Each sender hangs up while its 1 MB answer is on its way.
    for (let i = 0; i < 12; i++) await postAndHangUp(e.url, `gone ${i}`, '127.0.0.2', 20);
    const answer = await post(e.url, 'still answered');
    expect([answer.status, answer.headers['x-hookwatch-response'], answer.body.length]).toEqual([
      200,
      'forwarded',
      big.length,
    ]);
  }, 60_000);
});

/** One POST from a chosen local address; resolves with status, headers and body. */
function post(
  url: string,
  body: string | Buffer,
  from = '127.0.0.1',
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', localAddress: from, agent: false, headers: { 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A POST whose sender closes its connection `afterMs` after the request is written, answered or not. */
function postAndHangUp(url: string, body: string, from: string, afterMs = 0): Promise<void> {
  return new Promise((resolve) => {
    const req = httpRequest(url, {
      method: 'POST',
      localAddress: from,
      agent: false,
      headers: { 'content-length': Buffer.byteLength(body) },
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.end(body, () => setTimeout(() => req.destroy(), afterMs));
  });
}
