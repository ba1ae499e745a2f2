import { UsageError } from './command.js';

/** RFC 9110 section 5.6.2: a header name is a token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Bytes node:http refuses in a value (and that would split the message). */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const BAD_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** `--header Name=Value` options as pairs, or a usage error naming which one is wrong (by position, not by value). */
export function parseHeaderOptions(texts: readonly string[]): Array<[string, string]> {
  return texts.map((text, index) => {
    const equals = text.indexOf('=');
    if (equals <= 0) throw new UsageError(`--header number ${index + 1} should be Name=Value`);
    const name = text.slice(0, equals).trim();
    const value = text.slice(equals + 1);
    if (!TOKEN.test(name))
      throw new UsageError(`--header number ${index + 1} has a name that is not a valid header name`);
    if (BAD_VALUE.test(value))
      throw new UsageError(`--header ${name} has a control character (a line break?) in its value`);
    return [name, value];
  });
}

/** Sets each header in place (first of its name, any case; later ones removed), or adds it last. */
export function setHeaders(
  headers: Array<[string, string]>,
  updates: ReadonlyArray<readonly [string, string]>,
): Array<[string, string]> {
  const result = headers.map(([name, value]): [string, string] => [name, value]);
  for (const [name, value] of updates) {
    const wanted = name.toLowerCase();
    const first = result.findIndex(([key]) => key.toLowerCase() === wanted);
    if (first === -1) {
      result.push([name, value]);
      continue;
    }
    result[first] = [name, value];
    for (let i = result.length - 1; i > first; i--)
      if ((result[i] as [string, string])[0].toLowerCase() === wanted) result.splice(i, 1);
  }
  return result;
}

export function isHeaderName(text: string): boolean {
  return TOKEN.test(text);
}

export function isHeaderValue(text: string): boolean {
  return !BAD_VALUE.test(text);
}
