// One call to the endpoints API (docs/protocol.md) with a watch key, for `extend` and `delete`.
import { tokenHeaders } from './access-token.js';

/** How long the server has to answer. */
const API_TIMEOUT_MS = 10_000;

export interface ApiAnswer {
  status: number;
  /** The JSON body, or undefined when there is none (a 204) or it is not JSON. */
  body: unknown;
}

/** Sends `method path` to `origin` with `Authorization: Bearer <key>` (and the access token, when there is one); throws when there is no answer within 10 s or when stopped. */
export async function callEndpointApi(origin: string, method: string, path: string, key: string, body: unknown, stopSignal: AbortSignal, accessToken?: string): Promise<ApiAnswer> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const timer = setTimeout(abort, API_TIMEOUT_MS);
  stopSignal.addEventListener('abort', abort, { once: true });
  if (stopSignal.aborted) abort();
  try {
    const answer = await fetch(`${origin}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...tokenHeaders(accessToken), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: controller.signal,
    });
    const text = await answer.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
    } catch {
      parsed = undefined;
    }
    return { status: answer.status, body: parsed };
  } finally {
    clearTimeout(timer);
    stopSignal.removeEventListener('abort', abort);
  }
}

/** The `error.message` of an error answer, if it has one. */
export function errorMessage(body: unknown): string | undefined {
  const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof message === 'string' ? message : undefined;
}
