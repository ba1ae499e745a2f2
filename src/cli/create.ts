import type WebSocket from 'ws';
import { createEndpoint } from '../shared/api-client.js';
import { SUBPROTOCOL, type EndpointInfo, type ServerMessage, type WelcomeMessage } from '../shared/protocol.js';
import type { CreateEndpoint } from '../shared/schemas/endpoints-api.js';
import { parseCommandArgs, UsageError, type CommandContext } from './command.js';
import { describeError } from './send-request.js';
import { formatShareLink, liveUrlFor, parseServerBase, ShareLinkError } from './share-link.js';
import { deadline } from '../shared/deadline.js';
import { endpointsFilePath, saveEndpoint } from './endpoints-file.js';
import { parseEndpointName, parseLifetime } from './kept-options.js';

/** The server when neither --server nor HOOKWATCH_SERVER names one: `npm start`'s. */
export const DEFAULT_SERVER = 'http://localhost:8080';

export const CREATE_USAGE = `Usage: hookwatch create [--server <base-url>] [--kept [--name <name>] [--lifetime <span>] [--keep-secrets]]

Creates an endpoint and prints its receiver URL and its share link (which holds the watch
key: treat it as a secret). A live endpoint lives while something watches it (the page,
hookwatch tail or forward), plus a grace period after the last watcher leaves; a kept one
lives a fixed time (2 h by default) whether watched or not, with secret headers redacted.
The endpoint is added to hookwatch list (its key in a file only you can read).

  --server <base-url>   the Hookwatch server, e.g. https://hooks.example.com; without it,
                        $HOOKWATCH_SERVER, else ${DEFAULT_SERVER}
  --kept                a kept endpoint, which outlives its watchers
  --name <name>         a kept endpoint's name, its URL's last part: stripe-dev gives
                        /api/webhook-endpoint/stripe-dev (3-64 of a-z 0-9 -, upper case
                        taken as lower); implies --kept
  --lifetime <span>     how long a kept endpoint lives: 90m, 2h, 1d, 7d (default: the
                        server's, 2 h); implies --kept
  --keep-secrets        store secret header values as received, so signatures can be
                        checked and forwarded copies still verify; implies --kept
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
      name: { type: 'string' },
      lifetime: { type: 'string' },
      'keep-secrets': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    context.out(CREATE_USAGE);
    return 0;
  }
  const origin = resolveServer(values.server, process.env);
  const kept: Omit<CreateEndpoint, 'kind'> = {
    ...(values.name === undefined ? {} : { name: parseEndpointName(values.name) }),
    ...(values.lifetime === undefined ? {} : { ttlMs: parseLifetime(values.lifetime) }),
    ...(values['keep-secrets'] ? { redact: false } : {}),
  };
  if (values.kept || Object.keys(kept).length > 0) return createKeptEndpoint(origin, kept, context);

  let welcome: WelcomeMessage;
  try {
    welcome = await createLiveEndpoint(origin, context.stopSignal, context.accessToken);
  } catch (error) {
    context.err(`could not create an endpoint at ${origin}: ${describeError(error)}`);
    return 1;
  }
  const { endpoint } = welcome;
  context.out(`receiver:   ${endpoint.url}`);
  context.out(`share link: ${formatShareLink(origin, endpoint.id, endpoint.key)}`);
  await remember(origin, endpoint, context);
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
  const [text, source] =
    flag !== undefined ? [flag, '--server'] : fromEnv ? [fromEnv, 'HOOKWATCH_SERVER'] : [DEFAULT_SERVER, '--server'];
  try {
    return parseServerBase(text, source);
  } catch (error) {
    if (error instanceof ShareLinkError) throw new UsageError(error.message);
    throw error;
  }
}

/** Adds the endpoint to the list `hookwatch list` shows; a list that cannot be written is said, and the endpoint stands. */
async function remember(origin: string, endpoint: EndpointInfo, context: CommandContext): Promise<void> {
  try {
    await saveEndpoint(process.env, {
      id: endpoint.id,
      key: endpoint.key,
      origin,
      kind: endpoint.kind,
      url: endpoint.url,
      ...(endpoint.expiresAt ? { expiresAt: endpoint.expiresAt } : {}),
      createdAt: endpoint.createdAt,
    });
  } catch (error) {
    context.err(
      `note: the endpoint is not in hookwatch list: could not write ${endpointsFilePath(process.env)}: ${describeError(error)}`,
    );
  }
}

/** `POST /api/endpoints {"kind":"kept",…}`: a kept endpoint needs no socket to live. */
async function createKeptEndpoint(
  origin: string,
  choices: Omit<CreateEndpoint, 'kind'>,
  context: CommandContext,
): Promise<number> {
  const timeout = deadline(CREATE_TIMEOUT_MS, context.stopSignal);
  const answer = await createEndpoint(
    { origin, accessToken: context.accessToken, signal: timeout.signal },
    { kind: 'kept', ...choices },
  ).finally(timeout.clear);
  // A 201 from something else than Hookwatch holds no key.
  if (!answer.ok || typeof answer.value.key !== 'string') {
    const why = answer.ok
      ? 'not a Hookwatch answer'
      : answer.status === 0
        ? describeError(answer.cause)
        : `${answer.status}${answer.error ? ` ${answer.error.message}` : ''}`;
    context.err(`could not create a kept endpoint at ${origin}: ${why}`);
    return 1;
  }
  const endpoint = answer.value;
  context.out(`receiver:   ${endpoint.url}`);
  context.out(`share link: ${formatShareLink(origin, endpoint.id, endpoint.key)}`);
  await remember(origin, endpoint, context);
  const secrets = endpoint.redact === false ? ' Secret header values are stored as received.' : '';
  context.err(
    `The share link holds the watch key: share it only with whoever may watch. This kept endpoint lives until ${endpoint.expiresAt ?? 'its expiry'}, watched or not (hookwatch extend ${endpoint.id} --lifetime 7d makes it live longer).${secrets}`,
  );
  return 0;
}

/** Opens a live socket, sends `create`, and closes the socket once the welcome is in. */
async function createLiveEndpoint(
  origin: string,
  stopSignal: AbortSignal,
  accessToken: string | undefined,
): Promise<WelcomeMessage> {
  // Imported here, not at the top: `create --help` and `--kept` have no use for ws.
  const { default: WebSocketClass } = await import('ws');
  if (stopSignal.aborted) throw new Error('stopped');
  return new Promise((resolve, reject) => {
    const socket: WebSocket = new WebSocketClass(liveUrlFor(origin), [SUBPROTOCOL], {
      handshakeTimeout: CREATE_TIMEOUT_MS,
    });
    let problem: string | undefined;
    const fail = (message: string) => {
      problem ??= message;
      socket.terminate();
    };
    const timer = setTimeout(() => fail(`no answer within ${CREATE_TIMEOUT_MS / 1000} s`), CREATE_TIMEOUT_MS);
    const onStop = () => fail('stopped');
    stopSignal.addEventListener('abort', onStop, { once: true });
    // The token travels in the message, never in the socket's URL.
    socket.on('open', () =>
      socket.send(JSON.stringify({ type: 'create', ...(accessToken === undefined ? {} : { token: accessToken }) })),
    );
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
