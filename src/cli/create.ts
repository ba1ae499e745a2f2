import type WebSocket from 'ws';
import { SUBPROTOCOL, type EndpointInfo, type ServerMessage, type WelcomeMessage } from '../shared/protocol.js';
import { parseCommandArgs, UsageError, type CommandContext } from './command.js';
import { describeError } from './send-request.js';
import { formatShareLink, liveUrlFor, parseServerBase, ShareLinkError } from './share-link.js';

/** The server when neither --server nor HOOKWATCH_SERVER names one: `npm start`'s. */
export const DEFAULT_SERVER = 'http://localhost:8080';

export const CREATE_USAGE = `Usage: hookwatch create [--server <base-url>] [--kept]

Creates an endpoint and prints its receiver URL and its share link (which holds the watch
key: treat it as a secret). A live endpoint lives while something watches it (the page,
hookwatch tail or forward), plus a grace period after the last watcher leaves; a kept one
lives a fixed time (2 h by default) whether watched or not, with secret headers redacted.

  --server <base-url>   the Hookwatch server, e.g. https://hooks.example.com; without it,
                        $HOOKWATCH_SERVER, else ${DEFAULT_SERVER}
  --kept                a kept endpoint, which outlives its watchers
  -h, --help            this text`;

/** How long the server has to answer `create`. */
const CREATE_TIMEOUT_MS = 10_000;

export async function runCreate(args: string[], context: CommandContext): Promise<number> {
  const { values } = parseCommandArgs({
    args,
    allowPositionals: false,
    options: {
      server: { type: 'string' },
      kept: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    context.out(CREATE_USAGE);
    return 0;
  }
  const origin = resolveServer(values.server, process.env);
  if (values.kept) return createKeptEndpoint(origin, context);

  let welcome: WelcomeMessage;
  try {
    welcome = await createLiveEndpoint(origin, context.stopSignal);
  } catch (error) {
    context.err(`could not create an endpoint at ${origin}: ${describeError(error)}`);
    return 1;
  }
  const { endpoint } = welcome;
  context.out(`receiver:   ${endpoint.url}`);
  context.out(`share link: ${formatShareLink(origin, endpoint.id, endpoint.key)}`);
  context.err(
    `The share link holds the watch key: share it only with whoever may watch. ` +
      `This live endpoint lives only while something watches it (the page at the share link, or hookwatch tail/forward with it), ` +
      `plus ${endpoint.graceSeconds} s after the last watcher leaves; nothing watches it now, so start one within ${endpoint.graceSeconds} s.`,
  );
  return 0;
}

/**
 * The server's origin: `--server` when given, else HOOKWATCH_SERVER when set and not empty, else
 * DEFAULT_SERVER. A bad value is a usage error naming where it came from.
 */
export function resolveServer(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const fromEnv = env.HOOKWATCH_SERVER?.trim();
  const [text, source] = flag !== undefined ? [flag, '--server'] : fromEnv ? [fromEnv, 'HOOKWATCH_SERVER'] : [DEFAULT_SERVER, '--server'];
  try {
    return parseServerBase(text, source);
  } catch (error) {
    if (error instanceof ShareLinkError) throw new UsageError(error.message);
    throw error;
  }
}

/** `POST /api/endpoints {"kind":"kept"}`: a kept endpoint needs no socket to live. */
async function createKeptEndpoint(origin: string, context: CommandContext): Promise<number> {
  let endpoint: EndpointInfo;
  try {
    const answer = await fetch(`${origin}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind":"kept"}',
      signal: AbortSignal.any([context.stopSignal, AbortSignal.timeout(CREATE_TIMEOUT_MS)]),
    });
    const body = (await answer.json()) as EndpointInfo | { error?: { message?: string } };
    if (answer.status !== 201 || !('key' in body)) {
      const message = 'error' in body ? body.error?.message : undefined;
      context.err(`could not create a kept endpoint at ${origin}: ${answer.status}${message ? ` ${message}` : ''}`);
      return 1;
    }
    endpoint = body;
  } catch (error) {
    context.err(`could not create a kept endpoint at ${origin}: ${describeError(error)}`);
    return 1;
  }
  context.out(`receiver:   ${endpoint.url}`);
  context.out(`share link: ${formatShareLink(origin, endpoint.id, endpoint.key)}`);
  context.err(`The share link holds the watch key: share it only with whoever may watch. This kept endpoint lives until ${endpoint.expiresAt ?? 'its expiry'}, watched or not.`);
  return 0;
}

/** Opens a live socket, sends `create`, and closes the socket once the welcome is in. */
async function createLiveEndpoint(origin: string, stopSignal: AbortSignal): Promise<WelcomeMessage> {
  // Imported here, not at the top: `create --help` and `--kept` have no use for ws.
  const { default: WebSocketClass } = await import('ws');
  if (stopSignal.aborted) throw new Error('stopped');
  return new Promise((resolve, reject) => {
    const socket: WebSocket = new WebSocketClass(liveUrlFor(origin), [SUBPROTOCOL], { handshakeTimeout: CREATE_TIMEOUT_MS });
    let problem: string | undefined;
    const fail = (message: string) => {
      problem ??= message;
      socket.terminate();
    };
    const timer = setTimeout(() => fail(`no answer within ${CREATE_TIMEOUT_MS / 1000} s`), CREATE_TIMEOUT_MS);
    const onStop = () => fail('stopped');
    stopSignal.addEventListener('abort', onStop, { once: true });
    socket.on('open', () => socket.send(JSON.stringify({ type: 'create' })));
    socket.on('error', (error) => (problem ??= describeError(error)));
    socket.on('message', (data) => {
      let message: ServerMessage;
      try {
        message = JSON.parse(data.toString()) as ServerMessage;
      } catch {
        return fail('the server sent something that is not JSON');
      }
      if (message.type === 'welcome') {
        clearTimeout(timer);
        stopSignal.removeEventListener('abort', onStop);
        // Closing starts the endpoint's grace period; the caller says so.
        socket.close(1000);
        resolve(message);
      } else if (message.type === 'error') {
        problem ??= `${message.error.code}: ${message.error.message}`;
      }
    });
    socket.on('close', (code) => {
      clearTimeout(timer);
      stopSignal.removeEventListener('abort', onStop);
      reject(new Error(problem ?? `the socket closed (code ${code}) before the endpoint was created`));
    });
  });
}
