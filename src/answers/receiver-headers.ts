/** Says whether an answer came from the endpoint's configuration or from Hookwatch itself. */
export const RESPONSE_SOURCE_HEADER = 'x-hookwatch-response';

/**
 * On every answer from a receiver URL, configured or error (README, "Answers to senders"): nothing in it
 * may run script or load anything on our origin (CSP sandbox, nothing allowed, nosniff), and
 * browser-based senders may read it (CORS open).
 */
export const RECEIVER_HEADERS = Object.freeze({
  'content-security-policy': "sandbox; default-src 'none'",
  'x-content-type-options': 'nosniff',
  'access-control-allow-origin': '*',
  'access-control-expose-headers': '*',
  [RESPONSE_SOURCE_HEADER]: 'error',
});
