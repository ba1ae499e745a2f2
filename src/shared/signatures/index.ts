export { detectProvider } from './detect-provider.js';
export { signRequest, type HeaderChange, type SigningOptions, type SigningResult } from './sign-request.js';
export {
  PROVIDERS,
  type Provider,
  type SignedRequest,
  type Verdict,
  type VerdictReason,
  type VerificationOptions,
} from './types.js';
export { verifySignature } from './verify-signature.js';
