import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

export interface SentResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
}

/** One real HTTP request with node:http (any method, body on any method). */
export function send(
  url: string,
  options: { method?: string; headers?: OutgoingHttpHeaders | string[]; body?: string | Buffer } = {},
): Promise<SentResponse> {
  let headers = options.headers;
  if (options.body !== undefined && !Array.isArray(headers) && headers?.['content-length'] === undefined) {
    // node:http frames a GET/DELETE body only when told its length.
    headers = { ...headers, 'content-length': Buffer.byteLength(options.body) };
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: headers as OutgoingHttpHeaders },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString() });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Writes raw bytes to the server and returns what it answers until it closes or goes quiet:
 * for what node:http will not send (duplicate headers in a set order, odd framing).
 */
export function sendRaw(baseUrl: string, data: string | Buffer, quietMs = 300): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      clearTimeout(timer);
      timer = setTimeout(done, quietMs);
    });
    socket.on('end', done);
    socket.on('error', (error) => (chunks.length > 0 ? done() : reject(error)));
    socket.write(data);
  });
}
