import { parseCommandArgs, parseInteger, resolveShareLink, UsageError, type CommandContext } from './command.js';
import { formatTailLine, formatVerbose } from './format.js';
import { LiveFollower } from './live-follower.js';

export const TAIL_USAGE = `Usage: hookwatch tail <share-link> [options]

Prints each new request captured at the endpoint as it arrives: seq, time, method, path, size.
Keeps following across dropped connections without losing or repeating a request.

  <share-link>      the page's link, http(s)://host/#<endpointId>.<key>; - reads it from stdin
  -v, --verbose     also print headers and body
  --json            print each captured record as one JSON line (for jq)
  --from-seq <n>    first print the stored requests after seq n (0: all the server kept)
  -h, --help        this text`;

export async function runTail(args: string[], context: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: {
      verbose: { type: 'boolean', short: 'v' },
      json: { type: 'boolean' },
      'from-seq': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    context.out(TAIL_USAGE);
    return 0;
  }
  if (values.verbose && values.json) throw new UsageError('choose one of -v and --json');
  const fromSeq = values['from-seq'] === undefined ? undefined : parseInteger(values['from-seq'], '--from-seq', 0, Number.MAX_SAFE_INTEGER);
  const link = await resolveShareLink(positionals, context);
  const format = values.json ? (request: object) => JSON.stringify(request) : values.verbose ? formatVerbose : formatTailLine;

  const follower: LiveFollower = new LiveFollower({
    link,
    ...(fromSeq === undefined ? {} : { fromSeq }),
    handlers: {
      onJoined(welcome, resumed) {
        if (!resumed) {
          context.err(`watching endpoint ${link.endpointId} (receiver ${welcome.endpoint.url})`);
          if (fromSeq === undefined && welcome.backlog > 0) context.err(`${welcome.backlog} stored request(s) not shown; --from-seq 0 shows them`);
        } else {
          context.err(`rejoined endpoint ${link.endpointId}; resuming after #${follower.lastSeq}`);
        }
        if (welcome.gap && (resumed || fromSeq !== undefined)) {
          context.err(`warning: some requests were dropped by the server before we saw them (it keeps the newest ${welcome.endpoint.requestsKept})`);
        }
      },
      onRequest: (request) => context.out(format(request)),
      onStatus: (message) => context.err(message),
    },
  });
  const stop = () => follower.stop();
  context.stopSignal.addEventListener('abort', stop, { once: true });
  const end = await follower.run();
  context.stopSignal.removeEventListener('abort', stop);
  if (end.reason === 'stopped') return 0;
  context.err(end.message);
  return 1;
}
