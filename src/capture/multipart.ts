import { Busboy } from '@fastify/busboy';
import type { MultipartPart } from '../shared/schemas/captured-request.js';
import { MULTIPART_MAX_FIELD_TEXT_BYTES, MULTIPART_MAX_PARTS } from './record-bounds.js';

/** True for a `multipart/form-data` content type (the only multipart kind browsers and webhooks send). */
export function isMultipartFormData(contentType: string | null): contentType is string {
  return contentType !== null && /^\s*multipart\/form-data\s*;/i.test(contentType);
}

/**
 * Lists the parts of a stored multipart body with busboy. The body may be cut at the stored cap:
 * the parts read up to the cut are listed and the last is flagged `truncated`. A file part
 * records where its bytes sit in the body instead of a copy of them. Never rejects: a body that
 * is not valid multipart gives the parts found before the fault (or none).
 */
export function parseMultipart(body: Buffer, contentType: string, truncated: boolean): Promise<MultipartPart[]> {
  return new Promise((resolve) => {
    const parts: MultipartPart[] = [];
    let fieldTextLeft = MULTIPART_MAX_FIELD_TEXT_BYTES;
    let cursor = 0;
    let settled = false;
    const finish = (cutShort: boolean) => {
      if (settled) return;
      settled = true;
      const last = parts.at(-1);
      if (last && (cutShort || truncated)) last.truncated = true;
      resolve(parts);
    };
    /** Where `content` starts in the body, searching forward from the previous part. */
    const locate = (content: Buffer): number | null => {
      const at = content.length === 0 ? -1 : body.indexOf(content, cursor);
      if (at === -1) return null;
      cursor = at + content.length;
      return at;
    };

    let parser;
    try {
      parser = Busboy({
        headers: { 'content-type': contentType },
        limits: {
          parts: MULTIPART_MAX_PARTS,
          fieldSize: MULTIPART_MAX_FIELD_TEXT_BYTES,
          fieldNameSize: 200,
          headerPairs: 50,
        },
      });
    } catch {
      // No boundary, or a content type busboy does not take: not multipart after all.
      return resolve([]);
    }
    parser.on('file', (name, stream, filename, _encoding, mimeType) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const content = Buffer.concat(chunks);
        parts.push({
          name,
          filename,
          contentType: mimeType || null,
          size: content.length,
          offset: locate(content),
          text: null,
          truncated: false,
        });
      });
    });
    parser.on('field', (name, value, _nameTruncated, valueTruncated, _encoding, mimeType) => {
      const bytes = Buffer.byteLength(value);
      const keep = bytes <= fieldTextLeft;
      fieldTextLeft -= keep ? bytes : 0;
      parts.push({
        name,
        filename: null,
        contentType: mimeType || null,
        size: bytes,
        offset: null,
        text: keep ? value : null,
        truncated: valueTruncated || !keep,
      });
    });
    parser.on('partsLimit', () => finish(true));
    parser.on('finish', () => finish(false));
    parser.on('error', () => finish(true));
    parser.end(body);
  });
}
