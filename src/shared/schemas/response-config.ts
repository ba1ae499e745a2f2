import { z } from 'zod';
import { MAX_RULE_CONDITIONS, MAX_RULE_NAME_CHARS, MAX_RULES } from '../answer-rules.js';
import { parseTemplate } from '../answer-template.js';
import { globProblem } from '../glob.js';
import {
  DENIED_RESPONSE_HEADERS,
  MAX_RESPONSE_BODY_BYTES,
  MAX_RESPONSE_BODY_ESCAPED_BYTES,
  MAX_RESPONSE_CONFIG_JSON_BYTES,
  MAX_RESPONSE_DELAY_MS,
  MAX_RESPONSE_HEADERS,
  RESPONSE_CONTENT_TYPES,
} from '../response-limits.js';

export * from '../response-limits.js';

/** RFC 9110 token characters: a header name. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,64}$/;
/** Visible ASCII, spaces and tabs: no CR/LF, nothing a client could read as a new header. */
const HEADER_VALUE = /^[\t\x20-\x7e]{0,1024}$/;

export function isDeniedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return DENIED_RESPONSE_HEADERS.some((denied) =>
    denied.endsWith('*') ? lower.startsWith(denied.slice(0, -1)) : lower === denied,
  );
}

// Checks a refinement makes are not in JSON Schema: each such schema says them again in its
// `meta`, from the same constants, for the OpenAPI document (src/http/openapi.ts).

const status = z
  .number({ error: 'status must be a number' })
  .int('status must be an integer')
  .refine(
    (value) => (value >= 200 && value <= 299) || (value >= 400 && value <= 599),
    'status must be in 200-299 or 400-599',
  )
  .meta({
    description: 'The status the receiver URL answers with: 200-299 or 400-599 (never 1xx or 3xx).',
    anyOf: [
      { minimum: 200, maximum: 299 },
      { minimum: 400, maximum: 599 },
    ],
  });

export const responseHeaderSchema = z
  .tuple([z.string().meta({ pattern: HEADER_NAME.source }), z.string().meta({ pattern: HEADER_VALUE.source })], {
    error: 'each header is a [name, value] pair of strings',
  })
  .superRefine(([name, value], ctx) => {
    if (!HEADER_NAME.test(name))
      ctx.addIssue({
        code: 'custom',
        message: `header name ${JSON.stringify(name.slice(0, 64))} is not a valid HTTP token of at most 64 characters`,
      });
    else if (isDeniedHeader(name)) ctx.addIssue({ code: 'custom', message: `header ${name} may not be configured` });
    if (!HEADER_VALUE.test(value))
      ctx.addIssue({ code: 'custom', message: `header ${name} value must be at most 1024 visible ASCII characters` });
  })
  .describe(
    `A [name, value] pair. Names are HTTP tokens; denied (case-insensitive, * a prefix): ${DENIED_RESPONSE_HEADERS.join(', ')}.`,
  );

const body = z
  .string({ error: 'body must be a string' })
  .refine(
    (value) => utf8Length(value) <= MAX_RESPONSE_BODY_BYTES,
    `body must be at most ${MAX_RESPONSE_BODY_BYTES} bytes of UTF-8`,
  )
  // Stored and sent on as JSON, where a control character takes six bytes: bounded there too.
  .refine(
    (value) => JSON.stringify(value).length - 2 <= MAX_RESPONSE_BODY_ESCAPED_BYTES,
    `body must be at most ${MAX_RESPONSE_BODY_ESCAPED_BYTES} bytes once JSON-escaped (a control character counts 6)`,
  )
  .meta({
    description: `The answer's body: at most ${MAX_RESPONSE_BODY_BYTES} bytes of UTF-8, and at most ${MAX_RESPONSE_BODY_ESCAPED_BYTES} once JSON-escaped (a control character counts 6). Never sent with 204.`,
    maxLength: MAX_RESPONSE_BODY_BYTES,
  });
const contentType = z
  .enum(RESPONSE_CONTENT_TYPES, { error: `contentType must be one of ${RESPONSE_CONTENT_TYPES.join(', ')}` })
  .describe("The answer's Content-Type.");
const headers = z
  .array(responseHeaderSchema)
  .max(MAX_RESPONSE_HEADERS, `at most ${MAX_RESPONSE_HEADERS} headers`)
  .describe('Extra headers, sent as given: in order, with their case, a repeated name once per pair.');
const delayMs = z
  .number({ error: 'delayMs must be a number' })
  .int('delayMs must be an integer')
  .min(0, 'delayMs must be at least 0')
  .max(MAX_RESPONSE_DELAY_MS, `delayMs must be at most ${MAX_RESPONSE_DELAY_MS}`)
  .describe('How long the receiver waits before answering.');

/** A rule answer's body or header value may hold placeholders (answer-template.ts), each one we know. */
const withPlaceholders = (ctx: z.RefinementCtx, text: string, path: Array<string | number>) => {
  const template = parseTemplate(text);
  if ('unknown' in template) {
    ctx.addIssue({
      code: 'custom',
      path,
      message: `unknown placeholder ${template.unknown.slice(0, 64)}: use {{json.<path>}}, {{query.<name>}}, {{header.<name>}}, {{method}}, {{path}} or {{seq}}`,
    });
  }
};

const conditions = (what: string, nameLabel: string) =>
  z
    .record(
      z
        .string()
        .min(1, `${what} ${nameLabel} must not be empty`)
        .max(256, `${what} ${nameLabel} must be at most 256 characters`),
      z
        .string({ error: `${what} values must be strings (compared as text; "*" = present)` })
        .max(1024, `${what} values must be at most 1024 characters`),
    )
    .refine(
      (map) => Object.keys(map).length <= MAX_RULE_CONDITIONS,
      `at most ${MAX_RULE_CONDITIONS} ${what} conditions`,
    )
    .meta({ maxProperties: MAX_RULE_CONDITIONS });

const when = z
  .strictObject(
    {
      method: z
        .string({ error: 'method must be a string' })
        .regex(/^[A-Za-z]{1,32}$/, 'method must be a method name such as POST')
        .describe('Case-insensitive.'),
      path: z
        .string({ error: 'path must be a string' })
        .superRefine((glob, ctx) => {
          const problem = globProblem(glob);
          if (problem)
            ctx.addIssue({
              code: 'custom',
              message: `path ${JSON.stringify(glob.slice(0, 64))} is not a glob: ${problem}`,
            });
        })
        .describe('A glob on the sub-path: * within one segment, ** across segments, / alone the bare URL.'),
      query: conditions('query', 'names').describe(
        'Query parameters by name. Values are compared as text; "*" only asks that it be present.',
      ),
      headers: conditions('header', 'names').describe(
        'Headers by name, case-insensitive. Values are compared as text; "*" only asks that it be present.',
      ),
      json: conditions('json', 'paths').describe(
        'Dotted paths into the JSON body (items.0.id). Values are compared as text; "*" only asks that it be present.',
      ),
    },
    { error: 'when may only hold method, path, query, headers and json' },
  )
  .partial()
  .describe('All given must hold.');

const ruleAnswer = z
  .strictObject(
    { status, body, contentType, headers, delayMs },
    { error: 'answer may only hold status, body, contentType, headers and delayMs' },
  )
  .partial()
  .superRefine((answer, ctx) => {
    if (answer.body !== undefined) withPlaceholders(ctx, answer.body, ['body']);
    answer.headers?.forEach(([, value], index) => withPlaceholders(ctx, value, ['headers', index, 1]));
  })
  .describe("The answer: the default answer's fields, each optional (status 200).");

export const answerRuleSchema = z
  .strictObject(
    {
      name: z
        .string({ error: 'name must be a string' })
        .max(MAX_RULE_NAME_CHARS, `name must be at most ${MAX_RULE_NAME_CHARS} characters`)
        .describe("Shown on the page and recorded in the record's `answer.name`.")
        .optional(),
      when: when.optional(),
      times: z
        .number({ error: 'times must be a number' })
        .int('times must be a whole number')
        .min(1, 'times must be at least 1')
        .max(1_000_000_000, 'times must be at most 1000000000')
        .describe(
          'Answers only its first N matches (counted across instances; reset when the configuration is set), then is passed over.',
        )
        .optional(),
      chance: z
        .number({ error: 'chance must be a number' })
        .gt(0, 'chance must be above 0 (0 would never answer)')
        .max(1, 'chance must be at most 1')
        .describe('A match is answered by this rule with this probability, else passed over.')
        .optional(),
      answer: ruleAnswer,
    },
    { error: 'a rule may only hold name, when, times, chance and answer' },
  )
  .describe(
    'One answer rule. Placeholders in `answer.body` and header values: {{json.<path>}}, {{query.<name>}}, {{header.<name>}}, {{method}}, {{path}}, {{seq}}.',
  );
export type AnswerRule = z.infer<typeof answerRuleSchema>;
export type RuleWhen = z.infer<typeof when>;
export type RuleAnswer = z.infer<typeof ruleAnswer>;

export const responseConfigSchema = z
  .strictObject({
    status,
    body: body.default(''),
    contentType: contentType.default('application/json'),
    headers: headers.default([]),
    delayMs: delayMs.default(0),
    rules: z
      .array(answerRuleSchema, { error: 'rules must be a list' })
      .max(MAX_RULES, `at most ${MAX_RULES} rules`)
      .describe(
        'Answer rules (docs/protocol.md "Answer rules"): the first that matches a request and is not passed over answers it; else the fields above do.',
      )
      .optional(),
  })
  .refine(
    (config) => JSON.stringify(config).length <= MAX_RESPONSE_CONFIG_JSON_BYTES,
    `the configuration with its rules must be at most ${MAX_RESPONSE_CONFIG_JSON_BYTES} bytes as JSON`,
  )
  .describe('What a receiver URL answers senders with.');

/** What a receiver URL answers senders with. */
export type ResponseConfig = z.output<typeof responseConfigSchema>;

/** Validates untrusted input; the error message names each bad field. */
export function parseResponseConfig(
  input: unknown,
): { ok: true; value: ResponseConfig } | { ok: false; message: string } {
  const proto = protoKeyProblem(input);
  if (proto !== undefined) return { ok: false, message: proto };
  const parsed = responseConfigSchema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const message = parsed.error.issues.map((issue) => describeIssue(issue, input)).join('; ');
  return { ok: false, message };
}

/**
 * zod skips a `__proto__` key of a condition map (assigning it would set the prototype), so the
 * condition would vanish and its rule match everything: such a key is refused before parsing.
 */
function protoKeyProblem(input: unknown): string | undefined {
  const rules = (input as { rules?: unknown } | null)?.rules;
  if (!Array.isArray(rules)) return undefined;
  for (const [index, rule] of rules.entries()) {
    const when = (rule as { when?: unknown } | null)?.when;
    if (when === null || typeof when !== 'object') continue;
    for (const map of ['query', 'headers', 'json'] as const) {
      const conditions = (when as Record<string, unknown>)[map];
      if (conditions !== null && typeof conditions === 'object' && Object.hasOwn(conditions, '__proto__')) {
        const name = ruleName(input, index);
        return `rules.${index}.when.${map}${name === undefined ? '' : ` (rule ${JSON.stringify(name.slice(0, MAX_RULE_NAME_CHARS))})`}: a condition may not be named __proto__`;
      }
    }
  }
  return undefined;
}

/** `rules.2.answer.status (rule "fail three times"): status must be…`: the field, and for a rule its name too. */
function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  if (issue.path.length === 0) return issue.message;
  const [first, index] = issue.path;
  const name = first === 'rules' && typeof index === 'number' ? ruleName(input, index) : undefined;
  return `${issue.path.join('.')}${name === undefined ? '' : ` (rule ${JSON.stringify(name.slice(0, MAX_RULE_NAME_CHARS))})`}: ${issue.message}`;
}

function ruleName(input: unknown, index: number): string | undefined {
  const rules = (input as { rules?: unknown } | null)?.rules;
  const name = Array.isArray(rules) ? (rules[index] as { name?: unknown } | null)?.name : undefined;
  return typeof name === 'string' ? name : undefined;
}

/** UTF-8 length without Node's Buffer: the page validates with this module too. */
const encoder = new TextEncoder();
function utf8Length(text: string): number {
  // Cheap bound first: a UTF-16 unit is at most 3 bytes.
  return text.length * 3 <= MAX_RESPONSE_BODY_BYTES ? text.length : encoder.encode(text).length;
}
