// The endpoint as the page knows it, and the link that names it.
import { DEFAULT_MAX_REQUESTS, type EndpointInfo } from '../../../src/shared/protocol.js';

export type EndpointKind = EndpointInfo['kind'];

/**
 * An endpoint as the page knows it. `partial`: joined over HTTP, which does not tell the
 * endpoint's answer, limits or creation time, and this browser had not seen it before.
 */
export interface PageEndpoint extends EndpointInfo {
  partial?: boolean;
}

/** What the next kept endpoint is made with (docs/protocol.md, `POST /api/endpoints`). */
export interface KeptOptions {
  ttlMs: number;
  /** Its id and URL's last part; none: a random one. */
  name?: string;
  /** `false`: secrets stored as received. */
  redact?: false;
}

/** The fields a kept create carries (none for a live one). */
export function createFields(kind: EndpointKind, options: KeptOptions | undefined): Partial<KeptOptions> {
  return kind === 'kept' && options ? options : {};
}

/** What joining an endpoint takes. */
export interface Credentials {
  endpointId: string;
  key: string;
}

/** How many of the newest requests the endpoint keeps (`requestsKept` is its old name, sent for one release). */
export function maxRequests(endpoint: EndpointInfo | undefined): number {
  return endpoint?.maxRequests ?? endpoint?.requestsKept ?? DEFAULT_MAX_REQUESTS;
}

/**
 * The endpoint a share link's fragment names: `#<id>.<key>`; `#<id>.` (an empty key) is one a
 * signed-in creator opened from the server's list, which only its creator can open.
 */
export function credentialsFromLink(hash: string): Credentials | undefined {
  const match = /^#([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9]{0,128})$/.exec(hash);
  return match ? { endpointId: match[1] as string, key: match[2] as string } : undefined;
}

/** The link that opens this log elsewhere; it holds the watch key. Without an endpoint, the page's own address. */
export function shareLink(
  endpoint: EndpointInfo | undefined,
  here: Pick<Location, 'origin' | 'pathname' | 'href'>,
): string {
  return endpoint ? `${here.origin}${here.pathname}#${endpoint.id}.${endpoint.key}` : here.href;
}
