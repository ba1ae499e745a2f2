// A signed-in user's endpoints as the server keeps them (ACCESS_MODE proxy or token:
// `GET /api/endpoints`), for "Your endpoints" to show beside this browser's own list, from any
// browser the user signs in with. They come without keys: the server lets their creator open
// them without one. Loaded when the list is first opened.
import { listOwnEndpoints } from '../../../src/shared/api-client.js';
import type { OwnEndpointsAnswer } from '../../../src/shared/schemas/endpoints-api.js';
import { pageApi } from '../transport/access.js';
import type { EndpointListItem } from './endpoints-panel.js';
import { formatSpan } from './lifetime.js';

export type OwnEndpoint = OwnEndpointsAnswer['endpoints'][number];

/** The user's living endpoints, oldest first; empty when the server has no users or cannot be asked. */
export async function fetchOwnEndpoints(): Promise<OwnEndpoint[]> {
  // A refusal leaves the list without them; it does not sign the page out.
  const answer = await listOwnEndpoints({ ...pageApi(), onStatus: undefined });
  return answer.ok ? answer.value.endpoints : [];
}

/** One as "Your endpoints" shows it. */
export function ownListItem(endpoint: OwnEndpoint, currentId: string | undefined, nowMs: number): EndpointListItem {
  const left = endpoint.expiresAt === undefined ? Number.NaN : Date.parse(endpoint.expiresAt) - nowMs;
  const lifetime =
    endpoint.kind === 'kept' ? (left > 0 ? `expires in ${formatSpan(left)}` : 'expired') : 'while a tab watches it';
  return {
    id: endpoint.id,
    name: endpoint.id,
    summary: `${endpoint.kind === 'kept' ? 'Kept' : 'Live'} · ${lifetime} · yours on this server`,
    current: endpoint.id === currentId,
    expired: endpoint.kind === 'kept' && !(left > 0),
  };
}
