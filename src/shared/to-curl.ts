import type { CapturedRequest } from './schemas/captured-request.js';
import { encodeBase64, encodeUtf8 } from './signatures/bytes.js';

/**
 * Headers curl computes itself (or that belong to the old connection); copying them would make
 * the replay lie about its own length or target.
 */
const SKIPPED_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade']);

/** Headers curl adds on its own; when the original had none, `-H 'Name:'` stops curl sending one. */
const CURL_DEFAULT_HEADERS = ['User-Agent', 'Accept'];

/** Quotes one argument for a POSIX shell: everything inside single quotes is literal. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * Past this many bytes the body no longer goes in an argument of curl's command line: Linux
 * refuses a single argument over 128 KiB (and all of them over ~2 MB) with "Argument list too
 * long", so big bodies are fed to `--data-binary @-` on stdin through a here-document instead.
 */
export const MAX_BODY_ARGUMENT_BYTES = 64 * 1024;

/** The delimiter of a body's here-document; a suffix is added while a body line equals it. */
const HEREDOC_DELIMITER = 'HOOKWATCH_BODY';

/**
 * When the server kept only part of the body (past MAX_BODY_BYTES): the sentence saying so. The
 * cURL command starts with it as a comment; the page can show it beside "copied" too.
 */
export function truncationNote(
  request: Pick<CapturedRequest, 'truncated' | 'size' | 'storedSize'>,
): string | undefined {
  if (!request.truncated) return undefined;
  return `Hookwatch stored only the first ${request.storedSize} of ${request.size} bytes of this body: the command sends those.`;
}

/**
 * A curl command that sends the same method, headers (order and duplicates kept) and body
 * bytes to `targetUrl`. Binary bodies, and text that a shell argument cannot hold (NUL),
 * travel as base64 through `base64 -d`, so the replay is byte for byte. A body over
 * MAX_BODY_ARGUMENT_BYTES (quoted) goes through stdin as a here-document: the text itself
 * (cut to its exact length with `head -c` when it does not end in a newline, since a
 * here-document always does), or base64 in lines of 76 for `base64 -d`. A truncated body is
 * sent as stored, under a leading `# ` comment saying so. Runs in the browser too.
 */
export function toCurl(request: CapturedRequest, targetUrl: string): string {
  const args: string[] = ['curl'];
  if (request.method === 'HEAD') args.push('--head');
  else if (request.method !== 'GET' || request.storedSize > 0) args.push('-X', shellQuote(request.method));
  args.push(shellQuote(targetUrl));

  const present = new Set<string>();
  for (const [name, value] of request.headers) {
    const lower = name.toLowerCase();
    present.add(lower);
    if (SKIPPED_HEADERS.has(lower)) continue;
    args.push('-H', shellQuote(`${name}: ${value}`));
  }
  for (const name of CURL_DEFAULT_HEADERS) {
    if (!present.has(name.toLowerCase())) args.push('-H', shellQuote(`${name}:`));
  }

  const note = truncationNote(request);
  const comment = note === undefined ? '' : `# ${note}\n`;
  if (request.storedSize === 0) return comment + args.join(' ');

  // curl adds its own Content-Type for a body, and Expect: 100-continue for large ones.
  if (!present.has('content-type')) args.push('-H', shellQuote('Content-Type:'));
  if (!present.has('expect')) args.push('-H', shellQuote('Expect:'));
  const binary = request.bodyEncoding === 'base64' || request.body.includes('\0');
  if (!binary) {
    const quoted = shellQuote(request.body);
    if (utf8Length(quoted) <= MAX_BODY_ARGUMENT_BYTES) return comment + [...args, '--data-raw', quoted].join(' ');
    args.push('--data-binary', '@-');
    const delimiter = heredocDelimiter(request.body);
    // A here-document ends in a newline the body may not have: head -c keeps the body's bytes only.
    const endsInNewline = request.body.endsWith('\n');
    const start = endsInNewline
      ? `${args.join(' ')} <<'${delimiter}'`
      : `head -c ${utf8Length(request.body)} <<'${delimiter}' | ${args.join(' ')}`;
    return `${comment}${start}\n${request.body}${endsInNewline ? '' : '\n'}${delimiter}`;
  }
  const base64 = request.bodyEncoding === 'base64' ? request.body : utf8ToBase64(request.body);
  args.push('--data-binary', '@-');
  if (base64.length <= MAX_BODY_ARGUMENT_BYTES)
    return `${comment}printf %s ${shellQuote(base64)} | base64 -d | ${args.join(' ')}`;
  // Base64 has no `_`, so no line can be the delimiter.
  const lines = base64.match(/.{1,76}/g) ?? [];
  return `${comment}base64 -d <<'${HEREDOC_DELIMITER}' | ${args.join(' ')}\n${lines.join('\n')}\n${HEREDOC_DELIMITER}`;
}

/** `HOOKWATCH_BODY`, or `HOOKWATCH_BODY_1`, … when a line of the body is exactly that. */
function heredocDelimiter(body: string): string {
  const lines = new Set(body.split('\n'));
  let delimiter = HEREDOC_DELIMITER;
  for (let n = 1; lines.has(delimiter); n++) delimiter = `${HEREDOC_DELIMITER}_${n}`;
  return delimiter;
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}

function utf8ToBase64(text: string): string {
  return encodeBase64(encodeUtf8(text));
}

/** The URL a replay should hit: the receiver URL plus the captured sub-path and query. */
export function replayUrl(request: CapturedRequest, receiverUrl: string): string {
  const queryStart = request.url.indexOf('?');
  return receiverUrl + request.subPath + (queryStart === -1 ? '' : request.url.slice(queryStart));
}
