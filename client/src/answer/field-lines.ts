// The answer form's multi-line fields: headers as `Name: value` lines, a rule's conditions as
// `name=value` lines. No DOM here: it is unit-tested.

/** `Name: value` lines; blank lines skipped. A line without a colon becomes a name the server refuses, by name. */
export function parseHeaderLines(text: string): Array<[string, string]> {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const colon = line.indexOf(':');
      return colon === -1 ? [line, ''] : [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
    });
}

/** An RFC 9110 token: what a header name may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The 1-based numbers of the lines with no colon that are a valid header name: the server would
 * take `NoColonHere` as a header with an empty value, so the form marks it instead. A line that
 * is no name at all (`just a name`) the server refuses, with its own words.
 */
export function headerLinesWithoutColon(text: string): number[] {
  const bad: number[] = [];
  text.split('\n').forEach((line, index) => {
    if (!line.includes(':') && TOKEN.test(line.trim())) bad.push(index + 1);
  });
  return bad;
}

/** What the form says of `headerLinesWithoutColon`; undefined when every line has its colon. */
export function headerColonError(text: string): string | undefined {
  const bad = headerLinesWithoutColon(text);
  if (bad.length === 0) return undefined;
  return `Line ${bad.join(', ')} has no colon: write one Name: value per line (Name: with nothing after it for an empty value).`;
}

export function headerLines(headers: ReadonlyArray<readonly [string, string]>): string {
  return headers.map(([name, value]) => `${name}: ${value}`).join('\n');
}

/**
 * `name=value` lines (split at the first `=`, so a value may hold one), blank lines skipped;
 * a later line for the same name wins. `bad`: the 1-based numbers of lines with no `=`, which
 * the form marks rather than guess what they meant.
 */
export function parseConditionLines(text: string): { conditions: Record<string, string>; bad: number[] } {
  const conditions: Record<string, string> = {};
  const bad: number[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    const equals = line.indexOf('=');
    if (equals === -1) bad.push(index + 1);
    else conditions[line.slice(0, equals).trim()] = line.slice(equals + 1).trim();
  });
  return { conditions, bad };
}

export function conditionLines(conditions: Readonly<Record<string, string>> | undefined): string {
  return Object.entries(conditions ?? {})
    .map(([name, value]) => `${name}=${value}`)
    .join('\n');
}
