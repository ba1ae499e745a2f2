import { parseCommandArgs, UsageError, type CommandContext } from './command.js';
import { readSaved, resolveTarget, writeSaved } from './endpoints-file.js';
import { parseLifetime } from './kept-options.js';
import { extendEndpoint } from '../shared/api-client.js';
import { deadline } from '../shared/deadline.js';
import { describeError } from './send-request.js';

export const EXTEND_USAGE = `Usage: hookwatch extend <share-link | name> --lifetime <span> [--shorten]

Makes a kept endpoint live <span> from now (90m, 2h, 1d, 7d; at most the server's
KEPT_MAX_TTL_MS, a week by default), and prints its new expiry. Every tab watching it shows
it. The endpoint is named by its share link, or by its id or name from hookwatch list.

  --lifetime <span>   how long it lives from now (required)
  --shorten           allow an expiry earlier than the one it has (without it, such an
                      extend is refused, when hookwatch list knows the expiry)
  -h, --help          this text`;

/** How long the server has to answer. */
const API_TIMEOUT_MS = 10_000;

export async function runExtend(args: string[], context: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: { lifetime: { type: 'string' }, shorten: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    context.out(EXTEND_USAGE);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`expected one endpoint, got ${positionals.length} arguments`);
  if (values.lifetime === undefined)
    throw new UsageError('--lifetime is required: how long the endpoint lives from now, such as 2h, 1d or 7d');
  const ttlMs = parseLifetime(values.lifetime);
  const { link, saved } = await resolveTarget(positionals[0], process.env);
  const before = saved?.expiresAt === undefined ? Number.NaN : Date.parse(saved.expiresAt);
  if (!values.shorten && before > Date.now() + ttlMs) {
    throw new UsageError(
      `it expires ${saved?.expiresAt} now: ${values.lifetime} from now would end it sooner; add --shorten to do that`,
    );
  }
  const timeout = deadline(API_TIMEOUT_MS, context.stopSignal);
  const answer = await extendEndpoint(
    { origin: link.origin, accessToken: context.accessToken, signal: timeout.signal },
    { id: link.endpointId, key: link.key },
    ttlMs,
  ).finally(timeout.clear);
  // A 200 from something else than Hookwatch (a proxy's page) is no expiry either.
  const expiresAt: unknown = answer.ok ? answer.value.expiresAt : undefined;
  if (typeof expiresAt !== 'string') {
    if (answer.ok)
      context.err(
        `could not extend ${link.endpointId}: ${link.origin} answered something that is not a Hookwatch answer`,
      );
    else if (answer.status === 0)
      context.err(`could not extend ${link.endpointId} at ${link.origin}: ${describeError(answer.cause)}`);
    else if (answer.status === 404)
      context.err(`endpoint not found: ${link.endpointId} expired or was deleted, or the key is wrong`);
    else
      context.err(
        `could not extend ${link.endpointId}: ${answer.status}${answer.error ? ` ${answer.error.message}` : ''}`,
      );
    return 1;
  }
  context.out(`${link.endpointId} expires at ${expiresAt}`);
  if (saved) {
    const all = await readSaved(process.env);
    await writeSaved(
      process.env,
      all.map((entry) => (entry.id === saved.id && entry.origin === saved.origin ? { ...entry, expiresAt } : entry)),
    );
  }
  return 0;
}
