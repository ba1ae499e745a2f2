import { describe, expect, it } from 'vitest';
import { answerErrors, formErrors } from '../../client/src/answer/answer-errors.js';
import { parseResponseConfig } from '../../src/shared/schemas/response-config.js';

/** What the server says about `input`, as INVALID_RESPONSE_CONFIG words it. */
function refused(input: Record<string, unknown>): string {
  const parsed = parseResponseConfig({
    status: 200,
    body: '',
    contentType: 'application/json',
    headers: [],
    delayMs: 0,
    ...input,
  });
  if (parsed.ok) throw new Error('the server took it');
  return `Invalid response configuration: ${parsed.message}`;
}

describe('the page: the answer form’s errors', () => {
  it('puts each of the server’s issues on its field, in words', () => {
    expect(
      answerErrors(
        refused({
          status: 302,
          headers: [
            ['X-Ok', '1'],
            ['Set-Cookie', 'a=b'],
          ],
        }),
        302,
      ),
    ).toEqual([
      { field: 'status', message: "Status 302 can't be used: choose 200–299 or 400–599." },
      {
        field: 'headers',
        message: "Header 2: Set-Cookie can't be set here: Hookwatch never lets an answer set cookies.",
      },
    ]);
    expect(answerErrors(refused({ delayMs: 30_001 }))).toEqual([
      { field: 'delayMs', message: 'Delay must be a whole number of milliseconds from 0 to 30000.' },
    ]);
    expect(answerErrors(refused({ body: 'x'.repeat(64 * 1024 + 1) }))).toEqual([
      { field: 'body', message: 'The body can be at most 64 KB (UTF-8).' },
    ]);
    expect(answerErrors(refused({ contentType: 'text/html' }))).toEqual([
      { field: 'contentType', message: 'Type must be one of the types listed.' },
    ]);
    expect(answerErrors(refused({ headers: Array.from({ length: 11 }, (_, i) => [`X-${i}`, '1']) }))).toEqual([
      { field: 'headers', message: 'At most 10 headers: one per line.' },
    ]);
  });

  it('says why a header is refused, by name', () => {
    const header = (name: string, value = '1') => answerErrors(refused({ headers: [[name, value]] }))[0]?.message;
    expect(header('Location')).toBe(
      "Header 1: Location can't be set here: Hookwatch never lets an answer send senders elsewhere.",
    );
    expect(header('Content-Type')).toBe("Header 1: Content-Type can't be set here: choose it under Type instead.");
    expect(header('Transfer-Encoding')).toBe(
      "Header 1: Transfer-Encoding can't be set here: Hookwatch frames the answer itself.",
    );
    expect(header('Access-Control-Allow-Origin')).toBe(
      "Header 1: Access-Control-Allow-Origin can't be set here: it would change how browsers treat Hookwatch's pages.",
    );
    expect(header('X-Hookwatch-Seq')).toBe(
      "Header 1: X-Hookwatch-Seq can't be set here: that name is kept for Hookwatch's own answers.",
    );
    expect(header('just a name', '')).toBe(
      'Header 1: “just a name” is not a header: write one Name: value per line (the name: letters, digits and - only).',
    );
    expect(header('X-Ok', 'é')).toBe(
      'Header 1: the value of X-Ok must be one line of at most 1024 plain ASCII characters.',
    );
  });

  it('keeps a quoted header name whole when it holds "; ", and leaves what names no field to be said as it is', () => {
    expect(answerErrors(refused({ headers: [['a; status: b', '']] }))).toEqual([
      {
        field: 'headers',
        message:
          'Header 1: “a; status: b” is not a header: write one Name: value per line (the name: letters, digits and - only).',
      },
    ]);
    expect(answerErrors('Invalid response configuration: Unrecognized key: "colour"')).toEqual([
      { field: undefined, message: 'Unrecognized key: "colour"' },
    ]);
  });

  it('catches numbers that are not numbers before asking the server', () => {
    expect(formErrors('', '0')).toEqual([
      { field: 'status', message: 'Status must be a whole number: 200–299 or 400–599.' },
    ]);
    expect(formErrors('200', '1.5')).toEqual([
      { field: 'delayMs', message: 'Delay must be a whole number of milliseconds from 0 to 30000.' },
    ]);
    expect(formErrors('200', '')).toEqual([]);
  });
});
