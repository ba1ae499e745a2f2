// What the server says about a refused answer (INVALID_RESPONSE_CONFIG), field by field and in
// words: "headers.0: header Set-Cookie may not be configured" becomes "Header 1: Set-Cookie can't
// be set here: Hookwatch never lets an answer set cookies." No DOM here: it is unit-tested.
import { MAX_RESPONSE_BODY_BYTES, MAX_RESPONSE_BODY_ESCAPED_BYTES, MAX_RESPONSE_DELAY_MS, MAX_RESPONSE_HEADERS } from '../../src/shared/response-limits.js';

/** The answer's fields, as the server's messages name them. */
export type AnswerField = 'status' | 'delayMs' | 'contentType' | 'headers' | 'body';

export interface FieldError {
  /** Undefined: the message names no field the form has. */
  field: AnswerField | undefined;
  message: string;
}

const FIELDS: readonly string[] = ['status', 'delayMs', 'contentType', 'headers', 'body'];
const SERVER_PREFIX = 'Invalid response configuration: ';
const RANGE = '200–299 or 400–599';

function kb(bytes: number): string {
  return `${Math.round(bytes / 1024)} KB`;
}

/** Why a header name is refused, by name (the server's DENIED_RESPONSE_HEADERS, in words). */
function deniedReason(name: string): string {
  const lower = name.toLowerCase();
  if (lower.startsWith('set-cookie')) return 'Hookwatch never lets an answer set cookies.';
  if (lower === 'location' || lower === 'refresh') return 'Hookwatch never lets an answer send senders elsewhere.';
  if (lower === 'content-type') return 'choose it under Type instead.';
  if (lower.startsWith('x-hookwatch-')) return "that name is kept for Hookwatch's own answers.";
  if (lower.startsWith(':')) return 'names starting with ":" belong to HTTP/2 itself.';
  if (/^(content-length|content-encoding|transfer-encoding|connection|keep-alive|upgrade|trailer|te|proxy-.*)$/.test(lower)) return 'Hookwatch frames the answer itself.';
  return "it would change how browsers treat Hookwatch's pages.";
}

/** One header issue (`headers.N: …`) in words; `index` counts from 0 among the header lines. */
function headerMessage(index: number, text: string): string {
  const which = `Header ${index + 1}`;
  const badName = /^header name "(.*)" is not a valid HTTP token/.exec(text);
  if (badName) return `${which}: “${badName[1]}” is not a header: write one Name: value per line (the name: letters, digits and - only).`;
  const denied = /^header (.+) may not be configured$/.exec(text);
  if (denied) return `${which}: ${denied[1]} can't be set here: ${deniedReason(denied[1] as string)}`;
  const badValue = /^header (.+) value must be/.exec(text);
  if (badValue) return `${which}: the value of ${badValue[1]} must be one line of at most 1024 plain ASCII characters.`;
  if (/pair of strings/.test(text)) return `${which}: write it as Name: value.`;
  return `${which}: ${text}`;
}

/** One issue of the server's message (`path: text`) in words. `status`: the status that was sent. */
function inWords(field: AnswerField, index: number | undefined, text: string, status: number | undefined): string {
  switch (field) {
    case 'status':
      return /200-299/.test(text) && status !== undefined && Number.isInteger(status) ? `Status ${status} can't be used: choose ${RANGE}.` : `Status must be a whole number: ${RANGE}.`;
    case 'delayMs':
      return `Delay must be a whole number of milliseconds from 0 to ${MAX_RESPONSE_DELAY_MS}.`;
    case 'contentType':
      return 'Type must be one of the types listed.';
    case 'body':
      return /escaped/.test(text)
        ? `The body is too long once stored: control characters count as 6 bytes each, and at most ${kb(MAX_RESPONSE_BODY_ESCAPED_BYTES)} fit.`
        : `The body can be at most ${kb(MAX_RESPONSE_BODY_BYTES)} (UTF-8).`;
    case 'headers':
      return index === undefined ? `At most ${MAX_RESPONSE_HEADERS} headers: one per line.` : headerMessage(index, text);
  }
}

/**
 * The server's INVALID_RESPONSE_CONFIG message, one error per issue, in the form's words.
 * `status`: the status the form sent, to name it.
 */
export function answerErrors(serverMessage: string, status?: number): FieldError[] {
  const text = serverMessage.startsWith(SERVER_PREFIX) ? serverMessage.slice(SERVER_PREFIX.length) : serverMessage;
  return splitIssues(text)
    .map((issue) => {
      const match = /^([A-Za-z]+)((?:\.\d+)*): (.*)$/s.exec(issue);
      const name = match?.[1];
      if (!match || !name || !FIELDS.includes(name)) return { field: undefined, message: issue };
      const field = name as AnswerField;
      const index = match[2] ? Number(match[2].split('.')[1]) : undefined;
      return { field, message: inWords(field, index, match[3] as string, status) };
    });
}

/** Issues are joined with "; ", each `path: message`; a header name quoted (as JSON) in one may hold "; " too. */
function splitIssues(text: string): string[] {
  const issues: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted && char === '\\') i++;
    else if (char === '"') quoted = !quoted;
    else if (!quoted && char === ';' && text[i + 1] === ' ') {
      issues.push(text.slice(start, i));
      start = i + 2;
      i++;
    }
  }
  issues.push(text.slice(start));
  return issues.filter((issue) => issue !== '');
}

/** What the form can tell before asking the server: numbers that are not numbers. */
export function formErrors(status: string, delayMs: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!/^\s*\d+\s*$/.test(status)) errors.push({ field: 'status', message: `Status must be a whole number: ${RANGE}.` });
  if (!/^\s*\d*\s*$/.test(delayMs)) errors.push({ field: 'delayMs', message: `Delay must be a whole number of milliseconds from 0 to ${MAX_RESPONSE_DELAY_MS}.` });
  return errors;
}
