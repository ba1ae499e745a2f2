import type { CapturedRequest } from '../shared/schemas/captured-request.js';
import { createAttemptCounter } from '../shared/delivery-groups.js';
import { parseCommandArgs, parseInteger, resolveShareLink, UsageError, type CommandContext } from './command.js';
import { formatTailLine, formatVerbose, toPrintable } from './format.js';
import { LiveFollower } from './live-follower.js';
import {
  checkSignature,
  formatSignatureLine,
  parseVerifyOption,
  shownCheck,
  warnInlineSecret,
  type SignatureCheck,
  type SignatureDisplay,
} from './verify.js';

export const TAIL_USAGE = `Usage: hookwatch tail <share-link> [options]

Prints each new request captured at the endpoint as it arrives: seq, time, method, path, size.
Keeps following across dropped connections without losing or repeating a request. Attempts of
one delivery (a provider's delivery id such as webhook-id or X-GitHub-Delivery, or the same body
again within an hour) are numbered: "· attempt 2 (webhook-id msg_…)"; --json adds "attempt".

  <share-link>      the page's link, http(s)://host/#<endpointId>.<key>; - reads it from stdin
  -v, --verbose     also print headers and body
  --json            print each captured record as one JSON line (for jq)
  --from-seq <n>    first print the stored requests after seq n (0: all the server kept)
  --verify <sender>:<secret>
                    check each request's signature: the verdict goes on its own line under
                    the request's (with --json, in a "signature" field). <sender>: github,
                    stripe, slack, shopify, standard-webhooks, or auto (guess from the headers).
                    <sender>:env:<NAME> reads the secret from the environment variable NAME,
                    which keeps it out of ps.
  --show-expected   on a mismatch, print the whole expected signature, not its first 12
                    characters: it is a valid signature of the body (docs/signatures.md).
  -h, --help        this text`;

export async function runTail(args: string[], context: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: {
      verbose: { type: 'boolean', short: 'v' },
      json: { type: 'boolean' },
      'from-seq': { type: 'string' },
      verify: { type: 'string' },
      'show-expected': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    context.out(TAIL_USAGE);
    return 0;
  }
  if (values.verbose && values.json) throw new UsageError('choose one of -v and --json');
  const fromSeq =
    values['from-seq'] === undefined
      ? undefined
      : parseInteger(values['from-seq'], '--from-seq', 0, Number.MAX_SAFE_INTEGER);
  const verify = values.verify === undefined ? undefined : parseVerifyOption(values.verify);
  if (values['show-expected'] && verify === undefined) throw new UsageError('--show-expected goes with --verify');
  const display: SignatureDisplay = { showExpected: values['show-expected'] === true };
  const link = await resolveShareLink(positionals, context);
  if (verify?.source === 'inline') warnInlineSecret(context);
  const chosenFormat = values.json ? formatJson : values.verbose ? formatVerboseWith : formatLineWith;
  // Attempts of one delivery (the provider's delivery id, or the same body again) are numbered on their line.
  const attemptOf = createAttemptCounter();
  const format = (request: CapturedRequest, signature?: SignatureCheck, shown?: SignatureDisplay) =>
    withAttempt(chosenFormat(request, signature, shown), attemptOf(request), values.json === true);
  // Verdicts come from WebCrypto, asynchronously: a chain keeps the lines in arrival order.
  let printed = Promise.resolve();
  const print = (request: CapturedRequest) => {
    if (verify === undefined) return context.out(format(request));
    const signature = checkSignature(verify, request);
    printed = printed.then(async () => context.out(format(request, await signature, display)));
  };

  const follower: LiveFollower = new LiveFollower({
    link,
    accessToken: context.accessToken,
    ...(fromSeq === undefined ? {} : { fromSeq }),
    handlers: {
      onJoined(welcome, resumed) {
        if (!resumed) {
          context.err(`watching endpoint ${link.endpointId} (receiver ${welcome.endpoint.url})`);
          if (fromSeq === undefined && welcome.backlog > 0)
            context.err(`${welcome.backlog} stored request(s) not shown; --from-seq 0 shows them`);
        } else {
          context.err(`rejoined endpoint ${link.endpointId}; resuming after #${follower.lastSeq}`);
        }
        if (welcome.gap && (resumed || fromSeq !== undefined)) {
          context.err(
            `warning: some requests were dropped by the server before we saw them (it keeps the newest ${welcome.endpoint.maxRequests})`,
          );
        }
      },
      onRequest: print,
      onStatus: (message) => context.err(message),
    },
  });
  const stop = () => follower.stop();
  context.stopSignal.addEventListener('abort', stop, { once: true });
  const end = await follower.run();
  context.stopSignal.removeEventListener('abort', stop);
  await printed;
  if (end.reason === 'stopped') return 0;
  context.err(end.message);
  return 1;
}

/**
 * ` · attempt 2 (webhook-id msg_1)` after the request's first line: every attempt of a delivery
 * a provider numbered by id, and the repeats of one found by its body. --json gets an `attempt` field.
 */
function withAttempt(text: string, found: ReturnType<ReturnType<typeof createAttemptCounter>>, json: boolean): string {
  if (found === undefined || (found.attempt === 1 && found.key.provider === undefined)) return text;
  if (json) return `${text.slice(0, -1)},"attempt":${found.attempt}}`;
  const what =
    found.key.id === undefined
      ? 'same body'
      : `${found.key.source.replace(/ header$| in the body$/, '')} ${toPrintable(found.key.id)}`;
  const newline = text.indexOf('\n');
  const first = newline === -1 ? text : text.slice(0, newline);
  return `${first} · attempt ${found.attempt} (${what})${newline === -1 ? '' : text.slice(newline)}`;
}

/** The request's line, and the verdict on its own indented line under it. */
function formatLineWith(request: CapturedRequest, signature?: SignatureCheck, display?: SignatureDisplay): string {
  return signature === undefined
    ? formatTailLine(request)
    : `${formatTailLine(request)}\n${formatSignatureLine(signature, display)}`;
}

/** `-v`: the verdict goes right under the request's line, before its headers. */
function formatVerboseWith(request: CapturedRequest, signature?: SignatureCheck, display?: SignatureDisplay): string {
  const [first = '', ...rest] = formatVerbose(request).split('\n');
  return signature === undefined
    ? [first, ...rest].join('\n')
    : [first, formatSignatureLine(signature, display), ...rest].join('\n');
}

/** One line for jq: the captured record, plus the verdict as `signature` (shown as on the terminal) when one was asked for. */
function formatJson(request: CapturedRequest, signature?: SignatureCheck, display?: SignatureDisplay): string {
  return JSON.stringify(signature === undefined ? request : { ...request, signature: shownCheck(signature, display) });
}
