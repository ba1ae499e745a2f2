/** Field shapes several schemas share. */
import { z } from 'zod';

/** A whole number of at least 0: a count, a size, a delay. */
export const count = (description: string) => z.int().min(0).describe(description);

/**
 * An ISO 8601 UTC time the server wrote. Only described, not checked: the server's own clock
 * writes it, and z.iso.datetime would put its long pattern in every JSON Schema that holds one.
 */
export const dateTime = (description: string) => z.string().meta({ format: 'date-time', description });

/** The `[name, value]` pairs of a message's headers, each bounded, at most `max` of them. */
export const headerPairs = (nameMax: number, valueMax: number, max: number) =>
  z.array(z.tuple([z.string().max(nameMax), z.string().max(valueMax)])).max(max);

/** A body carried in JSON: UTF-8 text, or base64 when the bytes are not valid UTF-8. */
export const bodyEncoding = z.enum(['utf8', 'base64']).describe('How `body` holds the bytes.');
