import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseShareLink, redactKeys, ShareLinkError, type ShareLink } from './share-link.js';

/** What a subcommand gets from the entry point: its output streams and the stop signals. */
export interface CommandContext {
  /** One line to stdout: results (request lines, records, URLs). */
  out(line: string): void;
  /** One line to stderr: status, warnings, errors. */
  err(line: string): void;
  /** Aborted by the first Ctrl-C / SIGTERM: finish what is in flight, then stop. */
  stopSignal: AbortSignal;
  /** Aborted by a second Ctrl-C: stop at once. */
  hardStopSignal: AbortSignal;
  /** The whole of stdin as text (for a share link given as `-`). */
  readStdin(): Promise<string>;
  /** `--token` or HOOKWATCH_TOKEN, for an instance with ACCESS_MODE=token (access-token.ts). */
  accessToken?: string | undefined;
}

/** A command-line mistake: the entry point prints it with a pointer to --help and exits 2. */
export class UsageError extends Error {}

/**
 * node:util parseArgs, strict, with its errors turned into UsageErrors. Its messages name the
 * offending option only, but they are passed through redactKeys in case a link is quoted.
 */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(redactKeys(error instanceof Error ? error.message : String(error)));
  }
}

/** A whole number in [min, max] from a flag's text. */
export function parseInteger(text: string, flag: string, min: number, max: number): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}`);
  return value;
}

/**
 * The one positional argument: a share link, or `-` to read it from stdin, which keeps the key
 * out of the process list (`ps` shows every user the arguments of every process).
 */
export async function resolveShareLink(positionals: string[], context: CommandContext): Promise<ShareLink> {
  if (positionals.length === 0)
    throw new UsageError('missing the share link (http(s)://host/#<endpointId>.<key>, or - to read it from stdin)');
  if (positionals.length > 1) throw new UsageError(`expected one share link, got ${positionals.length} arguments`);
  let text = positionals[0] as string;
  if (text === '-') {
    text = (await context.readStdin()).split('\n').find((line) => line.trim() !== '') ?? '';
    if (text === '') throw new UsageError('no share link on stdin');
  }
  try {
    return parseShareLink(text);
  } catch (error) {
    if (error instanceof ShareLinkError) throw new UsageError(error.message);
    throw error;
  }
}
