import { describe, expect, it } from 'vitest';
import { ruleInputOf } from '../../src/shared/answer-rules.js';
import {
  cleanHeaderValue,
  escapeJsonContent,
  fillTemplate,
  MAX_FILLED_VALUE_CHARS,
  parseTemplate,
  type Template,
} from '../../src/shared/answer-template.js';

const input = (body: string) =>
  ruleInputOf({ method: 'POST', subPath: '/x', query: {}, headers: [], body, bodyEncoding: 'utf8', isJson: true });
const template = (text: string) => parseTemplate(text) as Template;

describe('{{json:<path>}}: a JSON value inserted as JSON', () => {
  it('inserts objects, arrays, numbers, strings and booleans as JSON, and a missing value as null, so the answer parses', () => {
    const body = '{"obj":{"a":[1,2]},"s":"he said \\"hi\\"\\n","n":19.5,"t":true,"nil":null}';
    const filled = fillTemplate(
      template(
        '{"nested":{{json:obj}},"s":{{json:s}},"n":{{json:n}},"t":{{json:t}},"nil":{{json:nil}},"gone":{{json:missing.deep}}}',
      ),
      input(body),
      1,
      escapeJsonContent,
    );
    expect(JSON.parse(filled)).toEqual({
      nested: { a: [1, 2] },
      s: 'he said "hi"\n',
      n: 19.5,
      t: true,
      nil: null,
      gone: null,
    });
    // The quoted form is unchanged: string content, escaped.
    expect(fillTemplate(template('{"o":"{{json.obj}}"}'), input(body), 1, escapeJsonContent)).toBe(
      '{"o":"{\\"a\\":[1,2]}"}',
    );
  });

  it('writes null for a value too large to fit, never half a value', () => {
    const big = JSON.stringify({ obj: { list: Array.from({ length: 40_000 }, (_, i) => i) } });
    const filled = fillTemplate(template('{"nested":{{json:obj}}}'), input(big), 1, escapeJsonContent);
    expect(filled).toBe('{"nested":null}');
    expect(JSON.stringify({ list: Array.from({ length: 40_000 }, (_, i) => i) }).length).toBeGreaterThan(
      MAX_FILLED_VALUE_CHARS,
    );
    const small = fillTemplate(
      template('{"a":{{json:s}},"b":{{json:s}}}'),
      input('{"s":"xxxxxxxxxx"}'),
      1,
      escapeJsonContent,
      30,
    );
    expect(() => JSON.parse(small)).not.toThrow();
  });

  it('in a header value, the JSON text is cleaned like any value', () => {
    expect(fillTemplate(template('{{json:o}}'), input('{"o":{"é":"a\\r\\nb"}}'), 1, cleanHeaderValue)).toBe(
      '{"":"a\\r\\nb"}',
    );
  });

  it('refuses a json: placeholder without a path', () => {
    expect(parseTemplate('{{json:}}')).toEqual({ unknown: '{{json:}}' });
    expect(parseTemplate('{{json: a b}}')).toEqual({ unknown: '{{json: a b}}' });
  });
});

describe('the page warns when a JSON answer will not parse', () => {
  it('catches an unquoted placeholder, and lets {{json:…}} and quoted ones through', async () => {
    const { jsonBodyWarning } = await import('../../client/src/answer/rule-fields.js');
    expect(jsonBodyWarning('{"nested":{{json.obj}}}', 'application/json')).toMatch(
      /^Not valid JSON once its placeholders are filled in: .*\{\{json:<path>\}\}/,
    );
    expect(jsonBodyWarning('{"nested":{{json:obj}}}', 'application/json')).toBeUndefined();
    expect(jsonBodyWarning('{"nested":"{{json.obj}}","n":{{json:n}}}', 'application/json')).toBeUndefined();
    expect(jsonBodyWarning('{"ok":tru}', 'application/json')).toMatch(/^Not valid JSON: /);
    expect(jsonBodyWarning('{{json.challenge}}', 'text/plain')).toBeUndefined();
    expect(jsonBodyWarning('', 'application/json')).toBeUndefined();
    expect(jsonBodyWarning('{{nope}}', 'application/json')).toBeUndefined();
    expect(jsonBodyWarning(`[${'['.repeat(100_000)}`, 'application/json')).toMatch(/^Not valid JSON/);
  });
});

describe('the default answer’s JSON is checked as written', () => {
  it('takes braces as text there', async () => {
    const { jsonBodyWarning } = await import('../../client/src/answer/rule-fields.js');
    expect(jsonBodyWarning('{"a":"{{json.x}}"}', 'application/json', false)).toBeUndefined();
    expect(jsonBodyWarning('{"a":{{json:x}}}', 'application/json', false)).toMatch(/^Not valid JSON: /);
  });
});
