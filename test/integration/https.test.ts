import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_PATH, SUBPROTOCOL, type ServerMessage } from '../../src/shared/protocol.js';
import { decodeServerMessage } from '../../src/shared/request-frame.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** A throwaway self-signed certificate for 127.0.0.1, made by openssl for this run. */
function makeCertificate(): { cert: Buffer; key: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'hookwatch-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('HTTPS served directly', () => {
  let server: TestServer;
  let tls: { cert: Buffer; key: Buffer };

  beforeAll(async () => {
    tls = makeCertificate();
    server = await startServer({}, { tls });
  });
  afterAll(() => server.close());

  it('creates an endpoint over wss with an https receiver URL and captures a request sent over TLS', async () => {
    const socket = new WebSocket(`${server.wsUrl}${LIVE_PATH}`, [SUBPROTOCOL], { ca: tls.cert });
    const messages: ServerMessage[] = [];
    const next = (type: string) =>
      new Promise<ServerMessage>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${type}`)), 3000);
        const check = () => {
          const found = messages.find((m) => m.type === type);
          if (found) {
            clearTimeout(timer);
            resolve(found);
          } else setTimeout(check, 10);
        };
        check();
      });
    socket.on('message', (data, isBinary) =>
      messages.push(decodeServerMessage(isBinary ? (data as Buffer) : data.toString())),
    );
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'create' }));
    const welcome = await next('welcome');
    if (welcome.type !== 'welcome') throw new Error('unreachable');
    expect(welcome.endpoint.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/api\/webhook-tester\//);

    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        welcome.endpoint.url,
        { method: 'POST', ca: tls.cert, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end('{"over":"tls"}');
    });
    expect(status).toBe(200);
    const captured = await next('request');
    expect(captured.type === 'request' && captured.request.body).toBe('{"over":"tls"}');
    socket.close();
  });
});
