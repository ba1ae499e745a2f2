// What the reader can do with requests and the endpoint: copy, download, export, and the questions
// asked before making a new URL or clearing the log.
import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';
import { replayUrl, toCurl } from '../../../src/shared/to-curl.js';
import { confirmAction, copyText, download, toast } from '../dom.js';
import type { EndpointKind, PageEndpoint } from '../endpoint/endpoint.js';
import { toHar } from './export.js';
import { bodyBytes, curlCopyNote } from '../format.js';
import { formatSpan } from '../endpoint/lifetime.js';

/** `note`: said after "copied" (what the copy leaves out). */
export async function copy(text: string, what: string, note?: string): Promise<void> {
  toast((await copyText(text)) ? `${what} copied${note ? `; ${note}` : ''}` : `Could not copy ${what.toLowerCase()}`);
}

/** Copies the request as a cURL command; a body the server cut is said at once, not only in the command's comment. */
export function copyCurl(request: CapturedRequest, endpoint: PageEndpoint | undefined): void {
  if (endpoint) void copy(toCurl(request, replayUrl(request, endpoint.url)), 'cURL command', curlCopyNote(request));
}

export function copyJson(request: CapturedRequest): void {
  void copy(JSON.stringify(request, null, 2), 'JSON');
}

export function downloadBody(request: CapturedRequest): void {
  const extension = request.isJson ? 'json' : request.bodyEncoding === 'base64' ? 'bin' : 'txt';
  download(
    `request-${request.seq}.${extension}`,
    bodyBytes(request) as BlobPart,
    request.contentType ?? 'application/octet-stream',
  );
}

/** The log as JSON (the records as held) or HAR. */
export function exportLog(
  format: 'json' | 'har',
  requests: readonly CapturedRequest[],
  endpoint: PageEndpoint | undefined,
): void {
  if (format === 'json')
    download(`hookwatch-${endpoint?.id ?? 'log'}.json`, JSON.stringify(requests, null, 2), 'application/json');
  else if (endpoint) download(`hookwatch-${endpoint.id}.har`, toHar(requests, endpoint.url), 'application/json');
}

/** Before leaving `endpoint` for a new one of `kind`: what happens to the current URL. `keptName`: "kept for 2 h". */
export function confirmNewUrl(endpoint: PageEndpoint, kind: EndpointKind, keptName: string): Promise<boolean> {
  const next = kind === 'kept' ? `kept endpoint (${keptName})` : 'live endpoint (it lives while this tab is open)';
  const left = endpoint.expiresAt ? Date.parse(endpoint.expiresAt) - Date.now() : Number.NaN;
  const current =
    endpoint.kind === 'kept'
      ? `The current URL is kept: it keeps working${left > 0 ? ` for ${formatSpan(left)}` : ''}, watched or not.`
      : `The current URL keeps working while someone watches it, and for ${Number.isFinite(endpoint.graceSeconds) ? `${endpoint.graceSeconds} s` : 'a short grace'} after.`;
  return confirmAction(
    'Make a new URL?',
    `This tab will watch a new, empty ${next}. ${current} Back returns to it.`,
    'Make a new URL',
  );
}

/** Before clearing `count` requests: names the others watching when the server counted them (`watchers`), none when this tab is alone. */
export function confirmClear(count: number, watchers: number | undefined): Promise<boolean> {
  const what = count === 1 ? 'the 1 request' : `all ${count} requests`;
  if (watchers === undefined)
    return confirmAction(
      'Clear the log?',
      `This removes ${what} for everyone watching this endpoint, not only this tab. It cannot be undone.`,
      'Clear for everyone',
    );
  if (watchers > 1)
    return confirmAction(
      `Clear the log for all ${watchers} tabs watching this endpoint?`,
      `This removes ${what} in each of them, not only in this tab. It cannot be undone.`,
      `Clear for all ${watchers}`,
    );
  return confirmAction('Clear the log?', `This removes ${what}. It cannot be undone.`, 'Clear');
}
