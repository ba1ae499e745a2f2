/**
 * One shape that accepts every JSON body given: a field missing from some
 * samples is optional, a place that held several kinds of value is their union, arrays merge
 * their items, and integers a double cannot hold are counted. emit-types.ts writes the shape as
 * TypeScript, zod and JSON Schema. Bounded: samples, nesting and distinct fields are capped,
 * and the result says what was cut.
 */
import { isUnsafeInteger, type JsonNode } from './lossless-json.js';

export interface Shape {
  /** Values seen at this place. */
  count: number;
  nulls: number;
  booleans: number;
  strings: number;
  integers: number;
  floats: number;
  /** Integers past ±2^53: JSON.parse rounds them. */
  unsafeIntegers: number;
  /** The first such integer, as written, to show. */
  unsafeExample?: string;
  /** Arrays seen; `items` is undefined while every array was empty. */
  arrays?: { count: number; items?: Shape };
  objects?: ObjectShape;
  /** Nested past the depth cap: anything is accepted here. */
  deep: boolean;
}

export interface ObjectShape {
  count: number;
  /** Fields in the order first seen. */
  fields: Map<string, FieldShape>;
  /** Samples (indexes) in which an object stood here. */
  samples: Set<number>;
  /** New fields past the field cap were not recorded: any other key is accepted. */
  moreFields: boolean;
}

export interface FieldShape {
  shape: Shape;
  /** Samples (indexes) in which the field was present. */
  samples: Set<number>;
}

export interface InferLimits {
  maxSamples: number;
  maxDepth: number;
  /** Distinct fields over the whole shape. */
  maxFields: number;
}

export const INFER_LIMITS: InferLimits = { maxSamples: 500, maxDepth: 32, maxFields: 2000 };

export interface InferredShape {
  shape: Shape;
  samples: number;
  /** What a cap cut, in words. */
  notes: string[];
}

function emptyShape(): Shape {
  return { count: 0, nulls: 0, booleans: 0, strings: 0, integers: 0, floats: 0, unsafeIntegers: 0, deep: false };
}

/** The shape that accepts every sample (oldest first; the sample index names it in field notes). */
export function inferShape(samples: readonly JsonNode[], limits: InferLimits = INFER_LIMITS): InferredShape {
  const merger = createShapeMerger(limits);
  for (const sample of samples.slice(0, limits.maxSamples)) merger.add(sample);
  return merger.result(samples.length);
}

/**
 * Merges samples one at a time, so a caller can parse a body, merge it and let its tree go
 * before parsing the next (a 1 MiB body of numbers parses to tens of MB of nodes).
 */
export function createShapeMerger(limits: InferLimits = INFER_LIMITS): {
  add(sample: JsonNode): void;
  readonly added: number;
  result(total: number): InferredShape;
} {
  const root = emptyShape();
  let added = 0;
  let fields = 0;
  let deepSeen = false;
  let fieldsCapped = false;
  const merge = (shape: Shape, node: JsonNode, depth: number, sample: number): void => {
    shape.count++;
    if (depth > limits.maxDepth) {
      shape.deep = deepSeen = true;
      return;
    }
    switch (node.kind) {
      case 'null':
        shape.nulls++;
        return;
      case 'boolean':
        shape.booleans++;
        return;
      case 'string':
        shape.strings++;
        return;
      case 'number':
        if (!/^-?\d+$/.test(node.text)) shape.floats++;
        else if (isUnsafeInteger(node)) {
          shape.unsafeIntegers++;
          shape.unsafeExample ??= node.text;
        } else shape.integers++;
        return;
      case 'array': {
        const arrays = (shape.arrays ??= { count: 0 });
        arrays.count++;
        for (const item of node.items) merge((arrays.items ??= emptyShape()), item, depth + 1, sample);
        return;
      }
      case 'object': {
        const objects = (shape.objects ??= { count: 0, fields: new Map(), samples: new Set(), moreFields: false });
        objects.count++;
        objects.samples.add(sample);
        // A repeated key counts once, with its last value, as JSON.parse reads it.
        for (const [key, value] of new Map(node.entries)) {
          let field = objects.fields.get(key);
          if (!field) {
            if (fields >= limits.maxFields) {
              objects.moreFields = fieldsCapped = true;
              continue;
            }
            fields++;
            field = { shape: emptyShape(), samples: new Set() };
            objects.fields.set(key, field);
          }
          field.samples.add(sample);
          merge(field.shape, value, depth + 1, sample);
        }
        return;
      }
    }
  };
  return {
    add(sample) {
      if (added >= limits.maxSamples) return;
      merge(root, sample, 0, added++);
    },
    get added() {
      return added;
    },
    result(total) {
      const notes: string[] = [];
      if (total > added) notes.push(`Only the first ${added} of ${total} bodies were read.`);
      if (deepSeen) notes.push(`Values nested deeper than ${limits.maxDepth} levels are typed as unknown.`);
      if (fieldsCapped)
        notes.push(`Only the first ${limits.maxFields} distinct fields are typed; other keys are accepted as unknown.`);
      return { shape: root, samples: added, notes };
    },
  };
}

/** Whether objects at this place can lack the field. */
export function isOptional(objects: ObjectShape, field: FieldShape): boolean {
  return field.shape.count < objects.count;
}

/**
 * How a field came and went across the samples that had its object, oldest first, with
 * `labels` naming samples (`#12`): `appears from #13`, `missing from #13 on`, `missing from #12,
 * #14`; undefined when it is always there.
 */
export function presenceNote(objects: ObjectShape, field: FieldShape, labels: readonly string[]): string | undefined {
  if (!isOptional(objects, field)) return undefined;
  const order = [...objects.samples].sort((a, b) => a - b);
  const present = order.map((sample) => field.samples.has(sample));
  const name = (sample: number) => labels[sample] ?? `body ${sample + 1}`;
  const firstIn = present.indexOf(true);
  const firstOut = present.indexOf(false);
  // Present in a run at the end: it appeared; in a run at the start: it disappeared.
  if (firstIn > 0 && present.slice(firstIn).every(Boolean)) return `appears from ${name(order[firstIn] as number)}`;
  if (firstIn === 0 && firstOut > 0 && present.slice(firstOut).every((is) => !is))
    return `missing from ${name(order[firstOut] as number)} on`;
  const missing = order.filter((_, index) => !present[index]);
  // Every body has it, but not every object of an array in them does.
  if (missing.length === 0) return 'missing from some items';
  const listed = missing.slice(0, 5).map(name).join(', ');
  return `missing from ${listed}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''} (in ${field.samples.size} of ${objects.samples.size} bodies)`;
}
