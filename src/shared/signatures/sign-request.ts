import { encodeHex } from './bytes.js';
import type { ProviderScheme } from './provider-scheme.js';
import { githubScheme } from './providers/github.js';
import { shopifyScheme } from './providers/shopify.js';
import { slackScheme } from './providers/slack.js';
import { standardWebhooksScheme } from './providers/standard-webhooks.js';
import { stripeScheme } from './providers/stripe.js';
import { signGithub } from './signers/github.js';
import { signShopify } from './signers/shopify.js';
import type { Signer } from './signers/signer.js';
import { signSlack } from './signers/slack.js';
import { signStandardWebhooks } from './signers/standard-webhooks.js';
import { signStripe } from './signers/stripe.js';
import type { Provider, SignedRequest } from './types.js';

/** Each provider's recipe (for its key) and its signer. */
const SIGNING: Readonly<Record<Provider, { scheme: ProviderScheme; sign: Signer }>> = {
  github: { scheme: githubScheme, sign: signGithub },
  stripe: { scheme: stripeScheme, sign: signStripe },
  slack: { scheme: slackScheme, sign: signSlack },
  shopify: { scheme: shopifyScheme, sign: signShopify },
  'standard-webhooks': { scheme: standardWebhooksScheme, sign: signStandardWebhooks },
};

export interface SigningOptions {
  /** "Now" in epoch milliseconds, written as the fresh timestamp; defaults to the real clock. */
  nowMs?: number;
  /** Makes the message id for a Standard Webhooks request that has none; defaults to a random `msg_…`. */
  newMessageId?: () => string;
}

/** A header the signing set: its name as sent, what it was (undefined when it was added) and what it is now. */
export interface HeaderChange {
  name: string;
  before: string | undefined;
  after: string;
}

export type SigningResult =
  /** `headers`: the request's headers with the signature ones set in place (added at the end when missing). */
  | { ok: true; provider: Provider; headers: Array<[string, string]>; changed: HeaderChange[] }
  /** The secret cannot be this provider's: nothing was signed. The message never holds the secret. */
  | { ok: false; provider: Provider; reason: 'bad-secret'; message: string };

/**
 * Signs a request again as `provider` would now: the body as given, a fresh timestamp, the
 * secret turned into a key the way the verifier does (so a secret it refuses is refused here
 * too). Every other header is left as it is, in place.
 */
export async function signRequest(
  provider: Provider,
  request: Pick<SignedRequest, 'headers' | 'body'>,
  secret: string,
  options: SigningOptions = {},
): Promise<SigningResult> {
  const { scheme, sign } = SIGNING[provider];
  if (secret.trim() === '') {
    return {
      ok: false,
      provider,
      reason: 'bad-secret',
      message: `No secret was given; paste the signing secret from ${scheme.label}'s webhook settings.`,
    };
  }
  const key = scheme.readKey(secret);
  if (!key.ok) return { ok: false, provider, reason: 'bad-secret', message: key.message };
  const signed = await sign({
    headers: request.headers,
    body: request.body,
    key: key.key,
    nowSeconds: Math.floor((options.nowMs ?? Date.now()) / 1000),
    newMessageId: options.newMessageId ?? newMessageId,
  });
  const headers = request.headers.map(([name, value]): [string, string] => [name, value]);
  const changed = signed.map(([name, value]) => setHeader(headers, name, value));
  return { ok: true, provider, headers, changed };
}

/**
 * Sets one header in place: the first one of that name (any case) keeps its place and spelling
 * and takes the value, later ones are removed (a receiver could read either), or it is added last.
 */
function setHeader(headers: Array<[string, string]>, name: string, value: string): HeaderChange {
  const wanted = name.toLowerCase();
  const first = headers.findIndex(([key]) => key.toLowerCase() === wanted);
  if (first === -1) {
    headers.push([name, value]);
    return { name, before: undefined, after: value };
  }
  const [spelled, before] = headers[first] as [string, string];
  headers[first] = [spelled, value];
  for (let i = headers.length - 1; i > first; i--)
    if ((headers[i] as [string, string])[0].toLowerCase() === wanted) headers.splice(i, 1);
  return { name: spelled, before, after: value };
}

/** `msg_` and 24 hex digits of randomness, like the ids Svix gives. */
function newMessageId(): string {
  return `msg_${encodeHex(globalThis.crypto.getRandomValues(new Uint8Array(12)))}`;
}
