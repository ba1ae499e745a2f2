import { parseCommandArgs, UsageError, type CommandContext } from './command.js';
import { readSaved, resolveTarget, writeSaved } from './endpoints-file.js';
import { callEndpointApi } from './endpoint-api.js';
import { describeError } from './send-request.js';

export const DELETE_USAGE = `Usage: hookwatch delete <share-link | name>

Deletes an endpoint on its server: its URL answers 404 from then on, its requests are gone,
and every tab watching it is told. It leaves hookwatch list too. The endpoint is named by
its share link, or by its id or name from hookwatch list.

  -h, --help   this text`;

export async function runDelete(args: string[], context: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs({ args, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    context.out(DELETE_USAGE);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`expected one endpoint, got ${positionals.length} arguments`);
  const { link } = await resolveTarget(positionals[0], process.env);
  let status: number;
  try {
    ({ status } = await callEndpointApi(link.origin, 'DELETE', `/api/endpoints/${encodeURIComponent(link.endpointId)}`, link.key, undefined, context.stopSignal, context.accessToken));
  } catch (error) {
    context.err(`could not delete ${link.endpointId} at ${link.origin}: ${describeError(error)}`);
    return 1;
  }
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
