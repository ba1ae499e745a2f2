import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollRequests } from '../shared/api-client.js';
import { deadline } from '../shared/deadline.js';
import type { CapturedRequest } from '../shared/schemas/captured-request.js';
import { RECEIVER_PREFIXES } from '../shared/protocol.js';
import { detectProvider, signRequest } from '../shared/signatures/index.js';
import { parseCommandArgs, parseInteger, resolveShareLink, UsageError, type CommandContext } from './command.js';
import { displayPath, toPrintable } from './format.js';
import { parseTarget, PathRefusal, prepareForward, TargetError, type ForwardTarget } from './forward-request.js';
import { formatHttpMessage, HttpMessageError, parseHttpMessage, type EditableRequest } from './http-message.js';
import { INLINE_SECRET_NOTE, parseProvider, parseSecretOption } from './secret-option.js';
import { describeError } from './send-request.js';
import { MAX_SENT_BODY_BYTES, sendOnce } from './send-once.js';
import type { ShareLink } from './share-link.js';

export const REPLAY_USAGE = `Usage: hookwatch replay <share-link> <seq> [--to <url>] [--edit] [--secret <s> [--provider <p>]]

Sends stored request #<seq> again from this machine, byte for byte as forward does (same
method, headers, body; Host set to the target; hop-by-hop and forwarding headers dropped), and
prints the answer. The path sent is <url>'s path + the captured sub-path + the raw query; a
sub-path with a dot-segment is refused.

  <share-link>          the page's link, http(s)://host/#<endpointId>.<key>; - reads it from stdin
  <seq>                 the request's number, as the page and tail show it (#12 → 12)
  --to <url>            where to send (default: the endpoint's own receiver URL, where it is
                        captured again as a new request)
  --edit                open $VISUAL or $EDITOR (default vi) on the request as an HTTP message
                        (request line, headers, blank line, body) and send what you save
  --secret <s>          sign it again with a fresh timestamp, in the provider's scheme;
                        env:<NAME> reads the secret from that environment variable
  --provider <p>        github, stripe, slack, shopify or standard-webhooks (default: guessed
                        from the headers)
  --timeout <seconds>   how long to wait for the answer (default 30)
  -h, --help            this text

The answer (status, headers, body) goes to stdout. Exit 0 for an answer below 500, 1 for a 5xx,
when <url> cannot be reached, or when the request is not stored; 2 for a usage error.`;

export async function runReplay(args: string[], context: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: {
      to: { type: 'string' },
      edit: { type: 'boolean' },
      secret: { type: 'string' },
      provider: { type: 'string' },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    context.out(REPLAY_USAGE);
    return 0;
  }
  if (positionals.length !== 2)
    throw new UsageError("expected the share link and the request's seq (hookwatch replay <share-link> <seq>)");
  const seq = parseInteger((positionals[1] as string).replace(/^#/, ''), '<seq>', 1, Number.MAX_SAFE_INTEGER);
  const provider = values.provider === undefined ? undefined : parseProvider(values.provider);
  if (provider !== undefined && values.secret === undefined)
    throw new UsageError(`--provider ${provider} goes with --secret (re-signing needs the secret)`);
  const secret = values.secret === undefined ? undefined : parseSecretOption(values.secret);
  const timeoutMs = parseInteger(values.timeout ?? '30', '--timeout', 1, 3600) * 1000;
  const explicitTarget = values.to === undefined ? undefined : toTarget(values.to);
  const link = await resolveShareLink(positionals.slice(0, 1), context);
  if (secret?.source === 'inline') context.err(INLINE_SECRET_NOTE);

  const fetched = await fetchStored(link, seq, context.accessToken);
  if (typeof fetched === 'string') {
    context.err(fetched);
    return 1;
  }
  const target =
    explicitTarget ??
    toTarget(`${link.origin}${fetched.kept ? RECEIVER_PREFIXES.kept : RECEIVER_PREFIXES.live}${link.endpointId}`);
  let request = fetched.request;
  if (request.truncated)
    context.err(
      `warning: #${seq}'s body was stored cut (${request.storedSize} of ${request.size} bytes); the cut body is what is sent`,
    );
  if ((request.redacted ?? []).length > 0)
    context.err(`warning: ${request.redacted?.length} header value(s) are stored as [redacted] and go out that way`);

  if (values.edit) request = await editRequest(request, context);
  if (secret !== undefined) {
    const chosen = provider ?? detectProvider(request.headers);
    if (chosen === undefined)
      throw new UsageError('cannot tell the provider from the headers; name it with --provider');
    const signed = await signRequest(chosen, { headers: request.headers, body: bodyBytes(request) }, secret.secret);
    if (!signed.ok) throw new UsageError(`--secret: ${signed.message}`);
    request = { ...request, headers: signed.headers };
    context.err(
      `signed again as ${chosen}: ${signed.changed.map((change) => `${change.name} ${change.before === undefined ? 'added' : 'changed'}`).join(', ')}`,
    );
  }

  let prepared;
  try {
    prepared = prepareForward(request, target);
  } catch (error) {
    if (error instanceof PathRefusal) {
      context.err(`not sent: ${toPrintable(error.message)}`);
      return 1;
    }
    throw error;
  }
  context.err(
    `replay of #${seq}: ${toPrintable(request.method)} ${displayPath(request)} → ${target.protocol}//${target.host}${toPrintable(prepared.path)}`,
  );
  return sendOnce(target, prepared, timeoutMs, context);
}

function toTarget(text: string): ForwardTarget {
  try {
    return parseTarget(text);
  } catch (error) {
    if (error instanceof TargetError) throw new UsageError(error.message);
    throw error;
  }
}

const bodyBytes = (request: CapturedRequest) =>
  new Uint8Array(Buffer.from(request.body, request.bodyEncoding === 'base64' ? 'base64' : 'utf8'));

const FETCH_TIMEOUT_MS = 30_000;

/** The stored request `seq` (and whether the endpoint is kept, for its receiver URL), or why not. */
async function fetchStored(
  link: ShareLink,
  seq: number,
  accessToken: string | undefined,
): Promise<{ request: CapturedRequest; kept: boolean } | string> {
  const timeout = deadline(FETCH_TIMEOUT_MS);
  const answer = await pollRequests(
    { origin: link.origin, accessToken, signal: timeout.signal },
    { id: link.endpointId, key: link.key },
    seq - 1,
  ).finally(timeout.clear);
  if (answer.status === 0 && !answer.ok) {
    return `cannot reach ${link.origin}: ${timeout.signal.aborted ? 'no answer within 30 s' : describeError(answer.cause)}`;
  }
  if (answer.status === 404) return 'endpoint not found: it expired, or the share link is wrong';
  if (!answer.ok)
    return `the server answered ${answer.status}${answer.error ? ` ${answer.error.code}: ${answer.error.message}` : ''}`;
  const request = answer.value.requests.find((stored) => stored.seq === seq);
  if (request === undefined)
    return `request #${seq} is not stored: the endpoint keeps only its newest requests, and a cleared log keeps none`;
  // Only kept endpoints expire at a set time; a live one answers null.
  return { request, kept: typeof answer.value.expiresAt === 'string' };
}

/**
 * Opens the editor on the request as an HTTP message and reads back what was saved. An editor
 * that adds a final newline the body did not have would change the body (and its signature), so
 * one added newline is taken off.
 */
async function editRequest(request: CapturedRequest, context: CommandContext): Promise<CapturedRequest> {
  const queryStart = request.url.indexOf('?');
  const original: EditableRequest = {
    method: request.method,
    target: `${request.subPath === '' ? '/' : request.subPath}${queryStart === -1 ? '' : request.url.slice(queryStart)}`,
    headers: request.headers,
    body: Buffer.from(bodyBytes(request)),
  };
  const dir = await mkdtemp(join(tmpdir(), 'hookwatch-replay-'));
  const file = join(dir, `request-${request.seq}.http`);
  try {
    await writeFile(file, formatHttpMessage(original), { mode: 0o600 });
    const editor = process.env.VISUAL || process.env.EDITOR || 'vi';
    const code = await new Promise<number | null>((resolve, reject) => {
      // Through the shell, as git does, so EDITOR may carry arguments ("code --wait").
      const child = spawn('sh', ['-c', `${editor} "$1"`, 'editor', file], { stdio: 'inherit' });
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (code !== 0) throw new UsageError(`the editor exited with ${code}; nothing was sent`);
    if ((await stat(file)).size > MAX_SENT_BODY_BYTES + 64 * 1024)
      throw new UsageError('the edited request is larger than 10 MiB; nothing was sent');
    let edited: EditableRequest;
    try {
      edited = parseHttpMessage(await readFile(file));
    } catch (error) {
      if (error instanceof HttpMessageError)
        throw new UsageError(`the edited request is not valid HTTP: ${error.message}; nothing was sent`);
      throw error;
    }
    let body = edited.body;
    if (!original.body.toString('latin1').endsWith('\n') && body.toString('latin1').endsWith('\n'))
      body = body.subarray(0, body.length - (body.toString('latin1').endsWith('\r\n') ? 2 : 1));
    const queryAt = edited.target.indexOf('?');
    const path = queryAt === -1 ? edited.target : edited.target.slice(0, queryAt);
    context.err(`sending the edited request (${edited.headers.length} headers, ${body.length} bytes of body)`);
    return {
      ...request,
      method: edited.method,
      url: edited.target,
      subPath: path === '/' ? '' : path,
      headers: edited.headers,
      body: body.toString('base64'),
      bodyEncoding: 'base64',
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
