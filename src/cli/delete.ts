import { parseCommandArgs, UsageError, type CommandContext } from './command.js';
import { readSaved, resolveTarget, writeSaved } from './endpoints-file.js';
import { deleteEndpoint } from '../shared/api-client.js';
import { deadline } from '../shared/deadline.js';
import { describeError } from './send-request.js';

export const DELETE_USAGE = `Usage: hookwatch delete <share-link | name>

Deletes an endpoint on its server: its URL answers 404 from then on, its requests are gone,
and every tab watching it is told. It leaves hookwatch list too. The endpoint is named by
its share link, or by its id or name from hookwatch list.

  -h, --help   this text`;

/** How long the server has to answer. */
const API_TIMEOUT_MS = 10_000;

export async function runDelete(args: string[], context: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: { help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    context.out(DELETE_USAGE);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`expected one endpoint, got ${positionals.length} arguments`);
  const { link } = await resolveTarget(positionals[0], process.env);
  const timeout = deadline(API_TIMEOUT_MS, context.stopSignal);
  const answer = await deleteEndpoint(
    { origin: link.origin, accessToken: context.accessToken, signal: timeout.signal },
    { id: link.endpointId, key: link.key },
  ).finally(timeout.clear);
  if (!answer.ok && answer.status === 0) {
    context.err(`could not delete ${link.endpointId} at ${link.origin}: ${describeError(answer.cause)}`);
    return 1;
  }
  const { status } = answer;
  if (status !== 204 && status !== 404) {
    context.err(`could not delete ${link.endpointId}: the server answered ${status}`);
    return 1;
  }
  // Gone either way: off the list.
  const saved = await readSaved(process.env);
  const left = saved.filter((entry) => !(entry.id === link.endpointId && entry.origin === link.origin));
  if (left.length !== saved.length) await writeSaved(process.env, left);
  if (status === 404) {
    context.err(`endpoint not found: ${link.endpointId} had expired or been deleted already, or the key is wrong`);
    return 1;
  }
  context.out(`deleted ${link.endpointId}`);
  return 0;
}
