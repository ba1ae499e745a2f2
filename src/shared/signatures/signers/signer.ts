import type { SignedRequest } from '../types.js';

/** What a provider's signer gets: the request to sign, its key (from the scheme's readKey) and "now". */
export interface SignerInput {
  headers: SignedRequest['headers'];
  body: Uint8Array;
  key: Uint8Array;
  /** Whole Unix seconds: every provider that signs a time writes it this way. */
  nowSeconds: number;
  /** A fresh message id, for schemes that sign one and the request has none. */
  newMessageId: () => string;
}

/** The headers that carry the signature, name as the provider writes it → value, in the order to add missing ones. */
export type SignatureHeaders = Array<[string, string]>;

/** One provider's way of signing a request, the mirror of its ProviderScheme. */
export type Signer = (input: SignerInput) => Promise<SignatureHeaders>;
