import { parseCommandArgs, type CommandContext } from './command.js';
import { endpointsFilePath, readSaved, type SavedEndpoint } from './endpoints-file.js';
import { formatShareLink } from './share-link.js';

export const LIST_USAGE = `Usage: hookwatch list [--links] [--json]

Lists the endpoints hookwatch create made on this machine, oldest first: id (a kept
endpoint's name), kind, when it expires, and its server. They are kept in
$XDG_CONFIG_HOME/hookwatch/endpoints.json (else ~/.config/hookwatch/endpoints.json),
readable by you only. The list tells what was last heard: an endpoint deleted elsewhere
still shows until hookwatch delete finds it gone.

  --links      add each share link (it holds the watch key: keep it to yourself)
  --json       one JSON array, for scripts
  -h, --help   this text`;

/** `expires in 6 d 23 h (2026-12-04 12:00 UTC)`, `expired 2026-11-27 10:00 UTC`, `lives while watched`. */
export function describeExpiry(endpoint: Pick<SavedEndpoint, 'kind' | 'expiresAt'>, nowMs: number): string {
  if (endpoint.kind === 'live') return 'lives while watched';
  const at = endpoint.expiresAt === undefined ? Number.NaN : Date.parse(endpoint.expiresAt);
  if (Number.isNaN(at)) return 'expiry unknown';
  const utc = `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  if (at <= nowMs) return `expired ${utc}`;
  const minutes = Math.floor((at - nowMs) / 60_000);
  const span =
    minutes >= 1440
      ? `${Math.floor(minutes / 1440)} d ${Math.floor((minutes % 1440) / 60)} h`
      : minutes >= 60
        ? `${Math.floor(minutes / 60)} h ${minutes % 60} min`
        : `${Math.max(minutes, 0)} min`;
  return `expires in ${span} (${utc})`;
}

export async function runList(args: string[], context: CommandContext): Promise<number> {
  const { values } = parseCommandArgs({
    args,
    allowPositionals: false,
    options: { links: { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    context.out(LIST_USAGE);
    return 0;
  }
  const saved = await readSaved(process.env);
  const now = Date.now();
  if (values.json) {
    const shown = saved.map(({ key, ...endpoint }) => ({
      ...endpoint,
      ...(values.links ? { shareLink: formatShareLink(endpoint.origin, endpoint.id, key) } : {}),
    }));
    context.out(JSON.stringify(shown));
    return 0;
  }
  if (saved.length === 0) {
    context.err(`no endpoints yet: hookwatch create adds them (${endpointsFilePath(process.env)})`);
    return 0;
  }
  const rows = saved.map((endpoint) => [
    endpoint.id,
    endpoint.kind,
    describeExpiry(endpoint, now),
    endpoint.origin,
    ...(values.links ? [formatShareLink(endpoint.origin, endpoint.id, endpoint.key)] : []),
  ]);
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] as string).length))) ?? [];
  for (const row of rows)
    context.out(
      row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] as number))).join('  '),
    );
  return 0;
}
