import { isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import type { CommandContext } from './command.js';
import { UsageError } from './command.js';
import { formatSize, toPrintable } from './format.js';
import type { ForwardTarget, PreparedRequest } from './forward-request.js';
import { TargetClient } from './send-request.js';

/** Bytes of an answer's body printed; the rest is read and counted. */
const PRINTED_BODY_BYTES = 64 * 1024;
/** The largest body `send` and `replay --edit` take from a file or stdin: the server's default read limit. */
export const MAX_SENT_BODY_BYTES = 10 * 1024 * 1024;

/**
 * Sends one request (no retry: the user is watching and can run it again), prints the answer on
 * stdout (status and time, headers, body) and gives the exit code: 0 for an answer below 500,
 * 1 for a 5xx or when the target could not be reached or did not answer in time.
 */
export async function sendOnce(
  target: ForwardTarget,
  prepared: PreparedRequest,
  timeoutMs: number,
  context: CommandContext,
): Promise<number> {
  const client = new TargetClient(target, timeoutMs, PRINTED_BODY_BYTES);
  try {
    const result = await client.send(prepared, context.hardStopSignal);
    if (!result.ok) {
      context.err(`not delivered: ${toPrintable(result.error)}`);
      return 1;
    }
    context.out(`HTTP ${result.status} in ${Math.round(result.ms)} ms`);
    for (const [name, value] of result.headers) context.out(`${toPrintable(name)}: ${toPrintable(value)}`);
    context.out('');
    if (result.body.length > 0) {
      context.out(
        isUtf8(result.body)
          ? toPrintable(result.body.toString('utf8'), true)
          : `(${formatSize(result.body.length)} of binary body not shown)`,
      );
    }
    if (result.bodyTruncated)
      context.err(`(only the first ${formatSize(PRINTED_BODY_BYTES)} of the answer's body is shown)`);
    if (result.status >= 500) {
      context.err(`the target answered ${result.status}, a server error`);
      return 1;
    }
    return 0;
  } finally {
    client.close();
  }
}

/** A body from a file, or from stdin for `-`, refused past MAX_SENT_BODY_BYTES without reading it all. */
export async function readBodySource(source: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const take = (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_SENT_BODY_BYTES)
      throw new UsageError(`the body is larger than ${formatSize(MAX_SENT_BODY_BYTES)}, more than a receiver takes`);
    chunks.push(chunk);
  };
  if (source === '-') {
    for await (const chunk of process.stdin as AsyncIterable<Buffer>) take(chunk);
    return Buffer.concat(chunks);
  }
  let file;
  try {
    file = await open(source, 'r');
  } catch (error) {
    throw new UsageError(`cannot read the body file: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    for await (const chunk of file.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) take(chunk);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read the body file: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  } finally {
    await file.close();
  }
  return Buffer.concat(chunks);
}

/** The flat header list node:http takes, Host first and Content-Length made exact. */
export function toPreparedHeaders(
  target: ForwardTarget,
  headers: ReadonlyArray<readonly [string, string]>,
  bodyBytes: number,
): string[] {
  const flat: string[] = ['Host', target.host];
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    if (lower === 'host' || lower === 'content-length' || lower === 'transfer-encoding' || lower === 'connection')
      continue;
    flat.push(name, value);
  }
  flat.push('Content-Length', String(bodyBytes));
  return flat;
}
