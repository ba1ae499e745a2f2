import { pollRequests, type ApiRefusal } from '../shared/api-client.js';
import type { CapturedRequest } from '../shared/schemas/captured-request.js';
import { bodyTextOf } from '../shared/body-text.js';
import { deadline } from '../shared/deadline.js';
import { emitTypes, inferFromBodies, TYPE_FORMATS, type TypeFormat } from '../shared/emit-types.js';
import { parseCommandArgs, resolveShareLink, UsageError, type CommandContext } from './command.js';
import { describeError } from './send-request.js';
import type { ShareLink } from './share-link.js';
import { parseWaitFilters, requestMatches } from './wait.js';

export const TYPES_USAGE = `Usage: hookwatch types <share-link> [filters] [--format ts|zod|json-schema]

Reads the requests the endpoint holds and prints a type that accepts every JSON body among
them: fields missing from some bodies are optional, mixed kinds are unions, integers past 2^53
are noted, and a field that appears or disappears between deliveries is marked. Bodies that are
not JSON are skipped (and counted on stderr).

  <share-link>          the page's link, http(s)://host/#<endpointId>.<key>; - reads it from stdin
  --format <f>          ts (a TypeScript type, the default), zod (a zod 4 schema), json-schema
  --name <Name>         the type's name (default WebhookBody)
  --filter <text>       only requests whose method, URL, headers or body contain the text (any
                        case), as the page's filter box does
  --method, --path, --header, --json
                        only requests that pass these, as 'hookwatch wait' reads them
  -h, --help            this text`;

/** Pages of GET …/requests read at most: the endpoint holds 50 requests, so a few pages at most. */
const MAX_PAGES = 100;
const TYPE_NAME = /^[A-Za-z_$][\w$]{0,63}$/;
/** How long one page of requests may take to come. */
const PAGE_TIMEOUT_MS = 30_000;

export async function runTypes(args: string[], context: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: {
      format: { type: 'string' },
      name: { type: 'string' },
      filter: { type: 'string' },
      method: { type: 'string' },
      path: { type: 'string' },
      header: { type: 'string', multiple: true },
      json: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    context.out(TYPES_USAGE);
    return 0;
  }
  const format = (values.format ?? 'ts') as TypeFormat;
  if (!TYPE_FORMATS.includes(format)) throw new UsageError(`--format takes ${TYPE_FORMATS.join(', ')}`);
  const name = values.name ?? 'WebhookBody';
  if (!TYPE_NAME.test(name)) throw new UsageError('--name takes an identifier such as StripeEvent');
  const filters = parseWaitFilters(values);
  const text = values.filter?.trim().toLowerCase() ?? '';
  const link = await resolveShareLink(positionals, context);

  const requests = await readAll(link, context.stopSignal, context.accessToken);
  const chosen = requests.filter(
    (request) => requestMatches(request, filters) && (text === '' || searchText(request).includes(text)),
  );
  const bodies = chosen.flatMap((request) => {
    const body = request.isJson ? bodyTextOf(request) : undefined;
    return body === undefined ? [] : [{ label: `#${request.seq}`, text: body }];
  });
  const { inferred, labels, skipped } = inferFromBodies(bodies);
  // Not JSON, or nested too deep to parse; bodies past the samples cap are not counted here (the output's notes say so).
  const notJson = chosen.length - bodies.length + skipped;
  if (inferred.samples === 0) {
    context.err(
      `no JSON bodies among the ${chosen.length} request(s) chosen (of ${requests.length} held): nothing to type`,
    );
    return 1;
  }
  context.err(
    `typed ${inferred.samples} JSON bod${inferred.samples === 1 ? 'y' : 'ies'} of ${chosen.length} request(s) chosen (${requests.length} held)${notJson > 0 ? `; ${notJson} not JSON${skipped > 0 ? ` or nested too deep` : ''}, skipped` : ''}`,
  );
  context.out(emitTypes(inferred, format, { name, labels }).trimEnd());
  return 0;
}

/** What the page's filter box matches against: method, URL, headers and text body, in lower case. */
function searchText(request: CapturedRequest): string {
  const headers = request.headers.map(([name, value]) => `${name}: ${value}`).join('\n');
  return `${request.method}\n${request.url}\n${headers}\n${bodyTextOf(request) ?? ''}`.toLowerCase();
}

/** Every request the endpoint holds, oldest first, a page at a time. The key goes only in the Authorization header. */
async function readAll(
  link: ShareLink,
  stop: AbortSignal,
  accessToken: string | undefined,
): Promise<CapturedRequest[]> {
  const requests: CapturedRequest[] = [];
  let afterSeq = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const timeout = deadline(PAGE_TIMEOUT_MS, stop);
    const polled = await pollRequests(
      { origin: link.origin, accessToken, signal: timeout.signal },
      { id: link.endpointId, key: link.key },
      afterSeq,
    ).finally(timeout.clear);
    if (!polled.ok) throw new Error(pollProblem(polled, link, stop, timeout.signal), { cause: polled.cause });
    const answer = polled.value;
    requests.push(...answer.requests);
    const last = answer.requests.at(-1);
    if (!answer.more || last === undefined) break;
    afterSeq = last.seq;
  }
  return requests;
}

/** Why a page of requests could not be read. */
function pollProblem(answer: ApiRefusal, link: ShareLink, stop: AbortSignal, timeout: AbortSignal): string {
  if (answer.status === 0) {
    if (stop.aborted) return 'stopped';
    return `could not read the endpoint's requests: ${timeout.aborted ? `no answer within ${PAGE_TIMEOUT_MS / 1000} s` : describeError(answer.cause)}`;
  }
  if (answer.status === 404) return "the endpoint does not exist (or has expired), or the link's key is wrong";
  if (answer.status === 200)
    return `${link.origin} answered something that is not a Hookwatch poll answer: is it a Hookwatch server?`;
  return `the server answered ${answer.status}${answer.error ? `: ${answer.error.message}` : ''}`;
}
