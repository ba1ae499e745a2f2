import { Agent as HttpAgent, request as httpRequest, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { formatSeconds } from './backoff.js';
import type { ForwardTarget, PreparedRequest } from './forward-request.js';

export type SendResult =
  /** `body`: the first `keepBodyBytes` of the answer; `bodyTruncated`: more came. */
  | { ok: true; status: number; ms: number; headers: Array<[string, string]>; body: Buffer; bodyTruncated: boolean }
  /** `retryable`: the target could not be reached or did not answer; worth another try. */
  | { ok: false; error: string; retryable: boolean; ms: number };

/** How much of an answer's body is kept by default: what the page is shown (the rest is read and dropped). */
const KEEP_BODY_BYTES = 4096;

/**
 * Sends prepared requests to one target with raw node:http: headers as a flat array and
 * `setHost: false`, so their order, case and duplicates go out as given (node adds only its
 * own Connection header, which is hop-by-hop). Connections are kept alive between requests.
 */
export class TargetClient {
  private readonly agent: HttpAgent;

  constructor(
    private readonly target: ForwardTarget,
    private readonly timeoutMs: number,
    /** How much of each answer's body to keep (more for `--respond`, which relays it). */
    private readonly keepBodyBytes = KEEP_BODY_BYTES,
  ) {
    this.agent =
      target.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  }

  send(prepared: PreparedRequest, signal?: AbortSignal): Promise<SendResult> {
    const started = performance.now();
    const request = this.target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      let settled = false;
      let req: ClientRequest | undefined;
      // The whole answer, body included, within the timeout: a body that trickles in or never
      // ends must not hold the requests behind it. Past it, an answer whose status came is
      // reported with what arrived (cut); one without is an error, retried.
      let answerCut: (() => void) | undefined;
      const deadline = setTimeout(() => {
        answerCut?.();
        req?.destroy(new Error(`no answer within ${formatSeconds(this.timeoutMs)}`));
      }, this.timeoutMs);
      const finish = (result: SendResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(result);
      };
      try {
        req = request({
          host: this.target.hostname,
          port: this.target.port,
          method: prepared.method,
          path: prepared.path,
          headers: prepared.headers,
          setHost: false,
          agent: this.agent,
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        // node:http refuses a header it cannot send (an invalid name or character): no retry helps.
        return finish({ ok: false, error: describeError(error), retryable: false, ms: performance.now() - started });
      }
      const elapsed = () => performance.now() - started;
      req.on('error', (error) =>
        finish({ ok: false, error: describeError(error), retryable: signal?.aborted !== true, ms: elapsed() }),
      );
      // A 101 hands the connection to another protocol, which is not ours to speak: the status is
      // the answer. (Without a listener node destroys the socket and neither 'response' nor
      // 'error' ever comes.)
      req.on('upgrade', (response, socket) => {
        socket.destroy();
        finish({
          ok: true,
          status: response.statusCode ?? 101,
          ms: elapsed(),
          headers: headerPairs(response.rawHeaders),
          body: Buffer.alloc(0),
          bodyTruncated: false,
        });
      });
      req.on('response', (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        let bodyTruncated = false;
        // Read to the end (so the connection can be reused), keeping only the start.
        response.on('data', (chunk: Buffer) => {
          if (kept >= this.keepBodyBytes) {
            bodyTruncated = true;
            return;
          }
          const part = chunk.subarray(0, this.keepBodyBytes - kept);
          if (part.length < chunk.length) bodyTruncated = true;
          chunks.push(part);
          kept += part.length;
        });
        const answered = () =>
          finish({
            ok: true,
            status: response.statusCode ?? 0,
            ms: elapsed(),
            headers: headerPairs(response.rawHeaders),
            body: Buffer.concat(chunks),
            bodyTruncated: bodyTruncated || !response.complete,
          });
        answerCut = answered;
        response.on('end', answered);
        // The status arrived but the body was cut: the target did answer, so count it delivered.
        response.on('close', answered);
      });
      req.end(prepared.body);
    });
  }

  /** Closes kept-alive connections so the process can end. */
  close(): void {
    this.agent.destroy();
  }
}

/** rawHeaders as pairs: the target's order, case and duplicates, like the captured side. */
function headerPairs(raw: string[]): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) headers.push([raw[i] as string, raw[i + 1] as string]);
  return headers;
}

/** A short reason: node's message, or the codes of an AggregateError (IPv4 and IPv6 both refused). */
export function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return [...new Set(error.errors.map((inner: unknown) => describeError(inner)))].join('; ');
  }
  if (error instanceof Error) {
    if (error.name === 'AbortError') return 'stopped';
    const code = (error as NodeJS.ErrnoException).code;
    return error.message !== '' ? error.message : (code ?? error.name);
  }
  return String(error);
}
