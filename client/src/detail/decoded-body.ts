// A compressed body (`Content-Encoding: gzip`, `deflate`, `br`) decoded for reading, beside its raw
// bytes. The browser's DecompressionStream does the work; its output is cut at MAX_DECODED_BYTES,
// so a small body that inflates to gigabytes (a zip bomb) cannot freeze the tab. Loaded with
// import() when such a body is first opened.
/** Decoded bytes kept at most: enough to read any webhook, far below what could hurt the tab. */
export const MAX_DECODED_BYTES = 1024 * 1024;

export interface Decoded {
  bytes: Uint8Array;
  /** Stopped at `maxBytes`: there was more. */
  cut: boolean;
  /** Why decoding stopped before the end (a body cut short, bytes that are not this coding); `bytes` holds what came before. */
  problem?: string;
}

/** The formats DecompressionStream takes for an HTTP content coding. HTTP's `deflate` is zlib-wrapped, though some senders send it raw. */
const FORMATS: Record<string, readonly string[]> = { gzip: ['gzip'], deflate: ['deflate', 'deflate-raw'], br: ['br'] };

/** Whether this browser can decode `coding` (Chromium has no `br` in DecompressionStream). */
export function canDecode(coding: string): boolean {
  const formats = FORMATS[coding];
  if (!formats) return false;
  try {
    new DecompressionStream(formats[0] as CompressionFormat);
    return true;
  } catch {
    return false;
  }
}

/** Decodes `bytes` in `coding`, at most `maxBytes` of output; throws only for a coding it cannot decode at all. */
export async function decodeBody(bytes: Uint8Array, coding: string, maxBytes = MAX_DECODED_BYTES): Promise<Decoded> {
  const formats = FORMATS[coding];
  if (!formats || !canDecode(coding)) throw new Error(`cannot decode ${coding}`);
  let best: Decoded | undefined;
  for (const format of formats) {
    const attempt = await decodeWith(bytes, format as CompressionFormat, maxBytes);
    if (attempt.problem === undefined) return attempt;
    // Raw deflate is tried after zlib's; the attempt that got further tells more.
    if (!best || attempt.bytes.length > best.bytes.length) best = attempt;
  }
  return best as Decoded;
}

async function decodeWith(bytes: Uint8Array, format: CompressionFormat, maxBytes: number): Promise<Decoded> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new DecompressionStream(format));
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  let problem: string | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - size;
      chunks.push(value.length > room ? value.subarray(0, room) : value);
      size += Math.min(value.length, room);
      if (value.length >= room && (value.length > room || !(await atEnd(reader)))) {
        cut = true;
        break;
      }
    }
  } catch (error) {
    problem = error instanceof Error && error.message ? error.message : 'the bytes are not valid for this coding';
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return { bytes: out, cut, ...(problem === undefined ? {} : { problem }) };
}

/** Exactly at the cap: whether anything follows (only then is it cut). */
async function atEnd(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<boolean> {
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return true;
    if (value.length > 0) return false;
  }
}
