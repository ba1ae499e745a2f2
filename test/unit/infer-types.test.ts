import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_INFERRED_TEXT_CHARS, emitTypes, inferFromBodies } from '../../src/shared/emit-types.js';
import { inferShape, INFER_LIMITS } from '../../src/shared/infer-types.js';
import { parseJsonLossless } from '../../src/shared/lossless-json.js';

function infer(...bodies: string[]) {
  return inferFromBodies(bodies.map((text, index) => ({ label: `#${index + 1}`, text })));
}

/** Evaluates the emitted zod module and returns its schema. */
function zodSchema(code: string): z.ZodType {
  const body = code
    .split('\n')
    .filter((line) => !line.startsWith('import ') && !line.startsWith('export type '))
    .join('\n')
    .replace('export const WebhookBody =', 'return');
  return new Function('z', body)(z) as z.ZodType;
}

function jsonSchemaValidator(code: string) {
  const ajv = new Ajv2020.default({ strict: false });
  return ajv.compile(JSON.parse(code) as object);
}

describe('type inference from bodies', () => {
  const bodies = [
    '{"id":1,"a":"x","nested":{"k":true}}',
    '{"id":2,"b":[1,2],"nested":{"k":false,"extra":null}}',
    '{"id":3.5,"a":null,"b":[],"nested":{"k":true}}',
  ];

  it('makes a field missing from some bodies optional, mixed kinds a union, and accepts every body', () => {
    const { inferred, labels } = infer(...bodies);
    const ts = emitTypes(inferred, 'ts', { labels });
    expect(ts).toContain('id: number;');
    expect(ts).toMatch(/a\?: string \| null;/);
    expect(ts).toMatch(/b\?: Array<number>;/);
    expect(ts).toMatch(/extra\?: null;/);
    const schema = zodSchema(emitTypes(inferred, 'zod', { labels }));
    for (const body of bodies) expect(schema.safeParse(JSON.parse(body)).success).toBe(true);
    expect(schema.safeParse({ id: 'nope', nested: { k: true } }).success).toBe(false);
    const validate = jsonSchemaValidator(emitTypes(inferred, 'json-schema', { labels }));
    for (const body of bodies) expect(validate(JSON.parse(body))).toBe(true);
    expect(validate({ nested: { k: true } })).toBe(false);
  });

  it('marks a field that appears or disappears between deliveries', () => {
    const appears = infer('{"a":1}', '{"a":1}', '{"a":1,"b":2}', '{"a":1,"b":3}');
    expect(emitTypes(appears.inferred, 'ts', { labels: appears.labels })).toContain('/** appears from #3 */');
    const goes = infer('{"a":1,"b":2}', '{"a":1}');
    expect(emitTypes(goes.inferred, 'zod', { labels: goes.labels })).toContain('// missing from #2 on');
    const comes = infer('{"b":1}', '{}', '{"b":1}');
    expect(emitTypes(comes.inferred, 'json-schema', { labels: comes.labels })).toContain(
      'missing from #2 (in 2 of 3 bodies)',
    );
  });

  it('marks a field that only some objects of an array have, though every body has it somewhere', () => {
    const { inferred, labels } = infer('{"items":[{"a":1},{"a":2,"b":3}]}', '{"items":[{"a":1,"b":1}]}');
    expect(emitTypes(inferred, 'ts', { labels })).toContain('/** missing from some items */\n    b?: number;');
  });

  it('merges nested arrays and types empty arrays as unknown', () => {
    const { inferred } = infer('{"m":[[1],[2,"x"]],"e":[]}', '{"m":[[]],"e":[]}');
    const ts = emitTypes(inferred, 'ts');
    expect(ts).toContain('m: Array<Array<string | number>>;');
    expect(ts).toContain('e: Array<unknown>;');
    expect(zodSchema(emitTypes(inferred, 'zod')).safeParse({ m: [[1, 'a'], []], e: [{}] }).success).toBe(true);
  });

  it('notes integers a double cannot hold, and keeps them accepted by zod (no int() check)', () => {
    const { inferred } = infer('{"id":18446744073709551615,"small":1}');
    const ts = emitTypes(inferred, 'ts');
    expect(ts).toContain('integers past 2^53 seen (e.g. 18446744073709551615)');
    const zod = emitTypes(inferred, 'zod');
    expect(zod).toContain('id: z.number(),');
    expect(zod).toContain('small: z.number().int(),');
    expect(zodSchema(zod).safeParse(JSON.parse('{"id":18446744073709551615,"small":1}')).success).toBe(true);
  });

  it('quotes keys that are not identifiers and keeps __proto__ a key', () => {
    const { inferred } = infer('{"content-type":"x","__proto__":{"polluted":1},"2x":true,"a\\"b*/":1}');
    const ts = emitTypes(inferred, 'ts');
    expect(ts).toContain('"content-type": string;');
    expect(ts).toContain('"2x": boolean;');
    const schema = zodSchema(emitTypes(inferred, 'zod'));
    expect(
      schema.safeParse(JSON.parse('{"content-type":"x","__proto__":{"polluted":1},"2x":true,"a\\"b*/":1}')).success,
    ).toBe(true);
    expect(emitTypes(inferred, 'zod')).toContain('["__proto__"]: z.object({');
    const jsonSchema = JSON.parse(emitTypes(inferred, 'json-schema')) as {
      properties: Record<string, unknown>;
      required: string[];
    };
    expect(Object.keys(jsonSchema.properties)).toContain('__proto__');
    expect(jsonSchema.required).toContain('__proto__');
  });

  it('types top-level arrays and scalars, and skips bodies that are not JSON', () => {
    const { inferred, skipped } = infer('[{"a":1}]', '"text"', 'not json');
    expect(skipped).toBe(1);
    expect(emitTypes(inferred, 'ts')).toContain('export type WebhookBody = Array<{\n  a: number;\n}> | string;');
  });

  it('caps depth, fields and samples, and says so', () => {
    const deep = `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`;
    const deepResult = inferShape([parseJsonLossless(deep)]);
    expect(deepResult.notes.join(' ')).toMatch(/deeper than 32 levels/);
    expect(emitTypes(deepResult, 'ts')).toContain('unknown');
    const wide = JSON.stringify(Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, i])));
    const wideResult = inferShape([parseJsonLossless(wide)]);
    expect(wideResult.notes.join(' ')).toMatch(/first 2000 distinct fields/);
    expect(emitTypes(wideResult, 'ts')).toContain('[key: string]: unknown;');
    expect(zodSchema(emitTypes(wideResult, 'zod')).safeParse(JSON.parse(wide)).success).toBe(true);
    const many = inferShape(Array.from({ length: INFER_LIMITS.maxSamples + 5 }, () => parseJsonLossless('{}')));
    expect(many.samples).toBe(INFER_LIMITS.maxSamples);
    expect(many.notes[0]).toMatch(/first 500 of 505/);
  });

  it('handles an array of 200,000 objects in bounded time', () => {
    const big = JSON.stringify(Array.from({ length: 200_000 }, (_, i) => ({ i, s: 'x' })));
    const started = performance.now();
    const { inferred } = infer(big);
    expect(emitTypes(inferred, 'ts')).toContain('i: number;');
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

describe('types from many large bodies', () => {
  it('parses one body at a time and stops at the text budget, saying how many were read', () => {
    const body = `[${Array.from({ length: 512 * 1024 }, () => '0').join(',')}]`;
    const bodies = Array.from({ length: 20 }, (_, i) => ({ label: `#${i + 1}`, text: body }));
    const { inferred, skipped } = inferFromBodies(bodies);
    expect(skipped).toBe(0);
    expect(inferred.samples).toBe(Math.floor(MAX_INFERRED_TEXT_CHARS / body.length));
    expect(inferred.notes).toContain(`Only the first ${inferred.samples} of 20 bodies were read.`);
    expect(emitTypes(inferred, 'ts')).toContain('Array<number>');
  });
});
