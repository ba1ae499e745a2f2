/**
 * An inferred shape (infer-types.ts) written as a TypeScript type, a zod 4 schema and a JSON
 * Schema (2020-12), each accepting every sample it came from. Keys that are not identifiers are
 * quoted; notes (a field that comes and goes, integers past 2^53, what a cap cut) become comments
 * or descriptions.
 */
import {
  createShapeMerger,
  INFER_LIMITS,
  isOptional,
  presenceNote,
  type InferredShape,
  type ObjectShape,
  type Shape,
} from './infer-types.js';
import { tryParseJsonLossless } from './lossless-json.js';

export type TypeFormat = 'ts' | 'zod' | 'json-schema';
export const TYPE_FORMATS: readonly TypeFormat[] = ['ts', 'zod', 'json-schema'];

export interface TypeOptions {
  /** The type's name: `WebhookBody`. */
  name?: string;
  /** Names of the samples, oldest first (`#12`), for notes on fields that come and go. */
  labels?: readonly string[];
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function propertyKey(key: string): string {
  // `"__proto__": x` in an object literal sets the prototype; a computed key is an own property.
  if (key === '__proto__') return '["__proto__"]';
  return IDENTIFIER.test(key) ? key : JSON.stringify(key);
}

/** Comment text cannot close the comment it is in. */
function commentText(text: string): string {
  return text.replaceAll('*/', '*\\/');
}

/** What to say about the values at a place: integers past 2^53. */
function valueNote(shape: Shape): string | undefined {
  if (shape.unsafeIntegers === 0) return undefined;
  return `integers past 2^53 seen (e.g. ${shape.unsafeExample ?? ''}): JSON.parse rounds them; read them as strings or BigInt to keep them exact`;
}

/** The notes on one field: how it came and went, and its numbers (in arrays too). */
function fieldNotes(objects: ObjectShape, key: string, labels: readonly string[]): string[] {
  const field = objects.fields.get(key);
  if (!field) return [];
  const notes = [presenceNote(objects, field, labels)];
  for (let shape: Shape | undefined = field.shape; shape; shape = shape.arrays?.items) notes.push(valueNote(shape));
  return notes.filter((note): note is string => note !== undefined);
}

function numberKind(shape: Shape): 'integer' | 'number' | undefined {
  if (shape.floats > 0) return 'number';
  if (shape.integers > 0 || shape.unsafeIntegers > 0) return 'integer';
  return undefined;
}

function pad(depth: number): string {
  return '  '.repeat(depth);
}

function tsType(shape: Shape, depth: number, labels: readonly string[]): string {
  if (shape.deep || shape.count === 0) return 'unknown';
  const members: string[] = [];
  if (shape.objects) members.push(tsObject(shape.objects, depth, labels));
  if (shape.arrays) {
    const items = shape.arrays.items ? tsType(shape.arrays.items, depth, labels) : 'unknown';
    members.push(`Array<${items}>`);
  }
  if (shape.strings) members.push('string');
  if (numberKind(shape)) members.push('number');
  if (shape.booleans) members.push('boolean');
  if (shape.nulls) members.push('null');
  return members.join(' | ');
}

function tsObject(objects: ObjectShape, depth: number, labels: readonly string[]): string {
  const lines = ['{'];
  for (const [key, field] of objects.fields) {
    const notes = fieldNotes(objects, key, labels);
    if (notes.length > 0) lines.push(`${pad(depth + 1)}/** ${commentText(notes.join('; '))} */`);
    lines.push(
      `${pad(depth + 1)}${propertyKey(key)}${isOptional(objects, field) ? '?' : ''}: ${tsType(field.shape, depth + 1, labels)};`,
    );
  }
  if (objects.moreFields)
    lines.push(`${pad(depth + 1)}/** more fields than were typed */`, `${pad(depth + 1)}[key: string]: unknown;`);
  lines.push(`${pad(depth)}}`);
  return lines.length === 2 ? 'Record<string, unknown>' : lines.join('\n');
}

function zodType(shape: Shape, depth: number, labels: readonly string[]): string {
  if (shape.deep || shape.count === 0) return 'z.unknown()';
  const members: string[] = [];
  if (shape.objects) members.push(zodObject(shape.objects, depth, labels));
  if (shape.arrays)
    members.push(`z.array(${shape.arrays.items ? zodType(shape.arrays.items, depth, labels) : 'z.unknown()'})`);
  if (shape.strings) members.push('z.string()');
  // zod's int() is the safe integers: a sample past 2^53 (rounded by JSON.parse) would fail it.
  const numbers = numberKind(shape);
  if (numbers) members.push(numbers === 'integer' && shape.unsafeIntegers === 0 ? 'z.number().int()' : 'z.number()');
  if (shape.booleans) members.push('z.boolean()');
  if (shape.nulls) members.push('z.null()');
  return members.length === 1 ? (members[0] as string) : `z.union([${members.join(', ')}])`;
}

function zodObject(objects: ObjectShape, depth: number, labels: readonly string[]): string {
  const lines = ['z.object({'];
  for (const [key, field] of objects.fields) {
    for (const note of fieldNotes(objects, key, labels)) lines.push(`${pad(depth + 1)}// ${commentText(note)}`);
    lines.push(
      `${pad(depth + 1)}${propertyKey(key)}: ${zodType(field.shape, depth + 1, labels)}${isOptional(objects, field) ? '.optional()' : ''},`,
    );
  }
  lines.push(`${pad(depth)}})`);
  // An object with keys past the cap keeps them, as unknown.
  const object = lines.length === 2 ? 'z.object({})' : lines.join('\n');
  return objects.moreFields || lines.length === 2 ? `${object}.catchall(z.unknown())` : object;
}

type JsonSchema = Record<string, unknown>;

function jsonSchema(shape: Shape, labels: readonly string[]): JsonSchema {
  if (shape.deep || shape.count === 0) return {};
  const members: JsonSchema[] = [];
  if (shape.objects) members.push(jsonSchemaObject(shape.objects, labels));
  if (shape.arrays)
    members.push(
      shape.arrays.items ? { type: 'array', items: jsonSchema(shape.arrays.items, labels) } : { type: 'array' },
    );
  if (shape.strings) members.push({ type: 'string' });
  const numbers = numberKind(shape);
  if (numbers) members.push({ type: numbers });
  if (shape.booleans) members.push({ type: 'boolean' });
  if (shape.nulls) members.push({ type: 'null' });
  return members.length === 1 ? (members[0] as JsonSchema) : { anyOf: members };
}

function jsonSchemaObject(objects: ObjectShape, labels: readonly string[]): JsonSchema {
  const properties: JsonSchema = {};
  const required: string[] = [];
  for (const [key, field] of objects.fields) {
    const schema = jsonSchema(field.shape, labels);
    const notes = fieldNotes(objects, key, labels);
    // defineProperty: a "__proto__" key stays a key.
    Object.defineProperty(properties, key, {
      value: notes.length > 0 ? { ...schema, description: notes.join('; ') } : schema,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    if (!isOptional(objects, field)) required.push(key);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

function header(inferred: InferredShape): string[] {
  return [
    `Generated by Hookwatch from ${inferred.samples} JSON bod${inferred.samples === 1 ? 'y' : 'ies'}.`,
    ...inferred.notes,
  ];
}

/** The shape in one format. */
export function emitTypes(inferred: InferredShape, format: TypeFormat, options: TypeOptions = {}): string {
  const name = options.name ?? 'WebhookBody';
  const labels = options.labels ?? [];
  const lead = header(inferred);
  switch (format) {
    case 'ts':
      return `/**\n${lead.map((line) => ` * ${commentText(line)}`).join('\n')}\n */\nexport type ${name} = ${tsType(inferred.shape, 0, labels)};\n`;
    case 'zod':
      return `${lead.map((line) => `// ${line}`).join('\n')}\nimport { z } from 'zod';\n\nexport const ${name} = ${zodType(inferred.shape, 0, labels)};\nexport type ${name} = z.infer<typeof ${name}>;\n`;
    case 'json-schema':
      return `${JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: name, description: lead.join(' '), ...jsonSchema(inferred.shape, labels) }, null, 2)}\n`;
  }
}

export interface BodySample {
  /** What names the sample in notes: `#12`. */
  label: string;
  text: string;
}

/**
 * Body text read for one inference at most: past it the rest are not parsed (the result says
 * how many were read), so a log of large bodies cannot hold the page's thread for long.
 */
export const MAX_INFERRED_TEXT_CHARS = 16 * 1024 * 1024;

/**
 * Parses the JSON samples (those that do not parse are counted as skipped) and infers their
 * shape, one body at a time: each tree is merged and let go before the next is parsed. At most
 * INFER_LIMITS.maxSamples bodies and MAX_INFERRED_TEXT_CHARS of text are read.
 */
export function inferFromBodies(bodies: readonly BodySample[]): {
  inferred: InferredShape;
  labels: string[];
  skipped: number;
} {
  const merger = createShapeMerger();
  const labels: string[] = [];
  let skipped = 0;
  let read = 0;
  let parsable = 0;
  for (const body of bodies) {
    if (merger.added >= INFER_LIMITS.maxSamples || read + body.text.length > MAX_INFERRED_TEXT_CHARS) {
      // Not read: counted as a body the result did not take (its note says so), not as skipped.
      parsable++;
      continue;
    }
    read += body.text.length;
    const node = tryParseJsonLossless(body.text);
    if (node === undefined) skipped++;
    else {
      parsable++;
      labels.push(body.label);
      merger.add(node);
    }
  }
  return { inferred: merger.result(parsable), labels, skipped };
}
