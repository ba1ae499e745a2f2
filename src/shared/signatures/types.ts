/** Senders whose webhook signatures Hookwatch can check (docs/signatures.md). */
export type Provider = 'github' | 'stripe' | 'slack' | 'shopify' | 'standard-webhooks';

export const PROVIDERS: readonly Provider[] = ['github', 'stripe', 'slack', 'shopify', 'standard-webhooks'];

export interface SignedRequest {
  /** [name, value] pairs as received: original case, duplicates kept. Match names case-insensitively. */
  headers: ReadonlyArray<readonly [string, string]>;
  body: Uint8Array;
  /** The stored body was cut at a cap: no check is possible. */
  truncated: boolean;
}

export type VerdictReason =
  | 'valid'
  | 'missing-header'
  | 'malformed-header'
  | 'bad-secret'
  | 'timestamp-out-of-tolerance'
  | 'truncated'
  | 'mismatch';

export interface Verdict {
  provider: Provider;
  ok: boolean;
  reason: VerdictReason;
  /** One or two plain sentences a developer can act on; never just "invalid". Never contains the secret. */
  message: string;
  /** On mismatch: the signature we computed, formatted as the provider writes it (e.g. `sha256=…`, `v1,…`). */
  expected?: string;
  /** On mismatch/malformed: the signature(s) the request carried. */
  received?: string[];
  /** On timestamp problems: how far outside the tolerance, in seconds (signed: positive = too old). */
  skewSeconds?: number;
  /** The header the signature was read from, as the request spelled it (e.g. `svix-signature`), once found. */
  signatureHeader?: string;
}

export interface VerificationOptions {
  /** "Now" in epoch milliseconds; defaults to the real clock. */
  nowMs?: number;
  /** Accepted distance between the signed timestamp and now, either way; default 300 s. `Infinity` skips the check. */
  toleranceSeconds?: number;
}
