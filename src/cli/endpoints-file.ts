// The endpoints this CLI created, with their watch keys, so `list`, `extend` and `delete` can name
// them without a share link: $XDG_CONFIG_HOME/hookwatch/endpoints.json (else
// ~/.config/hookwatch/endpoints.json), readable by its owner only, since it holds keys.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { formatShareLink, parseShareLink, ShareLinkError, type ShareLink } from './share-link.js';
import { UsageError } from './command.js';

/** One endpoint `create` made. */
export interface SavedEndpoint {
  id: string;
  key: string;
  /** `http(s)://host[:port]`: the server it lives on. */
  origin: string;
  kind: 'live' | 'kept';
  url: string;
  /** A kept endpoint's expiry (ISO 8601), as last heard. */
  expiresAt?: string;
  createdAt: string;
}

/** Endpoints kept in the file, the newest last: older ones fall off. */
export const SAVED_MAX = 200;
/** A file larger than this was not written by this CLI: it is not read. */
const FILE_MAX_BYTES = 1024 * 1024;

export function endpointsFilePath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME?.trim() ? (env.XDG_CONFIG_HOME as string) : join(homedir(), '.config');
  return join(base, 'hookwatch', 'endpoints.json');
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const KEY = /^[A-Za-z0-9]{1,128}$/;

function checked(value: unknown): SavedEndpoint | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { id, key, origin, kind, url, expiresAt, createdAt } = value as Record<string, unknown>;
  if (typeof id !== 'string' || !ID.test(id) || typeof key !== 'string' || !KEY.test(key)) return undefined;
  if (
    typeof origin !== 'string' ||
    !/^https?:\/\/[^/]+$/.test(origin) ||
    (kind !== 'live' && kind !== 'kept') ||
    typeof url !== 'string'
  )
    return undefined;
  if (expiresAt !== undefined && typeof expiresAt !== 'string') return undefined;
  return {
    id,
    key,
    origin,
    kind,
    url,
    ...(typeof expiresAt === 'string' ? { expiresAt } : {}),
    createdAt: typeof createdAt === 'string' ? createdAt : '',
  };
}

/** The saved endpoints, oldest first; none when there is no file. A file that is not this CLI's is an error naming it. */
export async function readSaved(env: NodeJS.ProcessEnv): Promise<SavedEndpoint[]> {
  const path = endpointsFilePath(env);
  let text: string;
  try {
    const bytes = await readFile(path);
    if (bytes.length > FILE_MAX_BYTES)
      throw new UsageError(
        `${path} is larger than ${FILE_MAX_BYTES} bytes: not a file hookwatch wrote (move it away to start a new list)`,
      );
    text = bytes.toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${path} is not JSON: not a file hookwatch wrote (move it away to start a new list)`);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { endpoints?: unknown } | null)?.endpoints;
  if (!Array.isArray(list))
    throw new UsageError(
      `${path} holds no list of endpoints: not a file hookwatch wrote (move it away to start a new list)`,
    );
  return list.slice(-SAVED_MAX).flatMap((value) => checked(value) ?? []);
}

/** Writes the list: to a temporary file first (mode 0600 from the start), then renamed over the old one, so a crash never leaves half a file. */
export async function writeSaved(env: NodeJS.ProcessEnv, endpoints: readonly SavedEndpoint[]): Promise<void> {
  const path = endpointsFilePath(env);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify({ endpoints: endpoints.slice(-SAVED_MAX) }, null, 2)}\n`, {
    mode: 0o600,
  });
  // A umask cannot widen 0600, but a file left by an older run may have other bits: set them.
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

/** Adds (or replaces) one endpoint, newest last. */
export async function saveEndpoint(env: NodeJS.ProcessEnv, endpoint: SavedEndpoint): Promise<void> {
  const saved = (await readSaved(env)).filter(
    (other) => !(other.id === endpoint.id && other.origin === endpoint.origin),
  );
  await writeSaved(env, [...saved, endpoint]);
}

/** What `extend` and `delete` act on: a share link, or the id (a kept endpoint's name) of one `create` saved. */
export interface Target {
  link: ShareLink;
  saved: SavedEndpoint | undefined;
}

export async function resolveTarget(text: string | undefined, env: NodeJS.ProcessEnv): Promise<Target> {
  if (text === undefined)
    throw new UsageError('missing the endpoint: its share link, or its id or name as `hookwatch list` shows it');
  const saved = await readSaved(env);
  if (/^https?:/i.test(text)) {
    let link: ShareLink;
    try {
      link = parseShareLink(text);
    } catch (error) {
      if (error instanceof ShareLinkError) throw new UsageError(error.message);
      throw error;
    }
    return { link, saved: saved.find((entry) => entry.id === link.endpointId && entry.origin === link.origin) };
  }
  // Names are lower case; an id is matched as it is.
  const matches = saved.filter((entry) => entry.id === text || entry.id === text.toLowerCase());
  if (matches.length === 0)
    throw new UsageError(
      `no endpoint named ${JSON.stringify(text.slice(0, 80))} in ${endpointsFilePath(env)}: give its share link, or see \`hookwatch list\``,
    );
  if (matches.length > 1)
    throw new UsageError(
      `${matches.length} saved endpoints are named ${text}, on different servers: give the share link instead`,
    );
  const entry = matches[0] as SavedEndpoint;
  return { link: parseShareLink(formatShareLink(entry.origin, entry.id, entry.key)), saved: entry };
}
