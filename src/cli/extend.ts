import { parseCommandArgs, UsageError, type CommandContext } from './command.js';
import { readSaved, resolveTarget, writeSaved } from './endpoints-file.js';
import { parseLifetime } from './kept-options.js';
import { callEndpointApi, errorMessage } from './endpoint-api.js';
import { describeError } from './send-request.js';

export const EXTEND_USAGE = `Usage: hookwatch extend <share-link | name> --lifetime <span> [--shorten]

Makes a kept endpoint live <span> from now (90m, 2h, 1d, 7d; at most the server's
KEPT_MAX_TTL_MS, a week by default), and prints its new expiry. Every tab watching it shows
it. The endpoint is named by its share link, or by its id or name from hookwatch list.

  --lifetime <span>   how long it lives from now (required)
  --shorten           allow an expiry earlier than the one it has (without it, such an
                      extend is refused, when hookwatch list knows the expiry)
  -h, --help          this text`;

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
  if (values.lifetime === undefined) throw new UsageError('--lifetime is required: how long the endpoint lives from now, such as 2h, 1d or 7d');
  const ttlMs = parseLifetime(values.lifetime);
  const { link, saved } = await resolveTarget(positionals[0], process.env);
  const before = saved?.expiresAt === undefined ? Number.NaN : Date.parse(saved.expiresAt);
  if (!values.shorten && before > Date.now() + ttlMs) {
    throw new UsageError(`it expires ${saved?.expiresAt} now: ${values.lifetime} from now would end it sooner; add --shorten to do that`);
  }
  let status: number;
  let body: unknown;
  try {
    ({ status, body } = await callEndpointApi(link.origin, 'POST', `/api/endpoints/${encodeURIComponent(link.endpointId)}/extend`, link.key, { ttlMs }, context.stopSignal, context.accessToken));
  } catch (error) {
    context.err(`could not extend ${link.endpointId} at ${link.origin}: ${describeError(error)}`);
    return 1;
  }
  if (status === 404) {
    context.err(`endpoint not found: ${link.endpointId} expired or was deleted, or the key is wrong`);
    return 1;
  }
  const expiresAt = (body as { expiresAt?: unknown } | undefined)?.expiresAt;
  if (status !== 200 || typeof expiresAt !== 'string') {
    const message = errorMessage(body);
    context.err(`could not extend ${link.endpointId}: ${status}${message ? ` ${message}` : ''}`);
    return 1;
  }
  context.out(`${link.endpointId} expires at ${expiresAt}`);
  if (saved) {
    const all = await readSaved(process.env);
    await writeSaved(process.env, all.map((entry) => (entry.id === saved.id && entry.origin === saved.origin ? { ...entry, expiresAt } : entry)));
  }
  return 0;
}
