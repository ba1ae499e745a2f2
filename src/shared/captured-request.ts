/**
 * The captured-request record: what the receiver stores and every watcher, the page and the CLI
 * read (docs/protocol.md). Built by capture/to-record-json.ts.
 */

/** A query string or form body: repeated names become lists, in the order received. */
export type ParamMap = Record<string, string | string[]>;

/**
 * One captured request, exactly as it is stored and sent to watchers (docs/protocol.md).
 * Headers are `[name, value]` pairs in arrival order, original case, duplicates kept.
 */
export interface CapturedRequest {
  /** Per-endpoint sequence number, from 1, never reused while the endpoint lives. */
  seq: number;
  method: string;
  /**
   * Raw request target as received: path under the receiver URL plus query string. Kept endpoints
   * store it with its secrets (user-info, secret query values) as `%5Bredacted%5D` (redact.ts).
   */
  url: string;
  /** The part of the path after `/api/webhook-tester/<id>`, "" when none. */
  subPath: string;
  query: ParamMap;
  headers: Array<[string, string]>;
  contentType: string | null;
  /**
   * Stored body: UTF-8 text when the bytes are valid UTF-8 and JSON escaping adds no more than
   * base64 would (a third); otherwise base64, so a stored body never costs more than 4/3 of its bytes.
   */
  body: string;
  bodyEncoding: 'utf8' | 'base64';
  /** True when the stored body is complete, valid UTF-8 and parses as JSON, whatever the content type. */
  isJson: boolean;
  /** Fields of an `application/x-www-form-urlencoded` body of at most 64 KiB, else null. */
  form: ParamMap | null;
  /** Parts of a `multipart/form-data` body, else null (see multipart.ts). */
  parts: MultipartPart[] | null;
  /** Derived views left out to keep the record bounded: `form` (body over 64 KiB), `parts`, `query`. */
  omitted: Array<'form' | 'parts' | 'query'>;
  /** Bytes the sender sent (or, past the read limit, read before stopping). */
  size: number;
  /** Bytes held in `body` (after base64 decoding). */
  storedSize: number;
  truncated: boolean;
  remoteAddress: string;
  /** Capture time, ISO 8601 UTC with milliseconds. */
  receivedAt: string;
  /** Kept endpoints: the headers whose values were replaced by `[redacted]` before storage. */
  redacted?: string[];
  /** Kept endpoints: the query parameters (names as in `query`) whose values were replaced by `[redacted]`. */
  redactedQuery?: string[];
  /** The answer the sender got, and what gave it. Last, so the store can add it to a record built before the answer was chosen. */
  answer: RecordedAnswer;
}

/** One part of a multipart body. A file's bytes are `body` bytes [offset, offset + size). */
export interface MultipartPart {
  name: string;
  filename: string | null;
  contentType: string | null;
  /** Bytes of the part's content that were stored. */
  size: number;
  /** Where the content starts in the stored body bytes; null when it could not be located. */
  offset: number | null;
  /** The text of a field part (not a file), at most 64 KiB for all fields together. */
  text: string | null;
  /** The stored body (or a parser limit) cut this part short. */
  truncated: boolean;
}

/**
 * The answer a request's sender got: its status, the delay before it, and who chose it: the
 * endpoint's default answer, one of its rules (`rule` its index, `name` when it has one), the
 * local app through `hookwatch forward --respond` (set once the sender has it, announced as
 * `answered`), or Hookwatch's own error (413 past the read limit).
 */
export interface RecordedAnswer {
  status: number;
  delayMs: number;
  by: 'default' | 'rule' | 'forwarder' | 'error';
  rule?: number;
  name?: string;
  /** `by: forwarder`: the local app's headers that were not passed on (hop-by-hop or denied), lower case. */
  droppedHeaders?: string[];
}

/** A captured request before the store numbers it. */
export type RequestDraft = Omit<CapturedRequest, 'seq'>;
