import { responderMessage } from '../shared/server-messages.js';

/**
 * Responder claims (`hookwatch forward --respond`) held in this process: the memory and SQLite
 * stores' sockets are all here, so the claims are too, and die with the process. The Redis store
 * keeps them in the endpoint's hash instead (redis-scripts.ts, SET_RESPONDER).
 */
export interface ResponderClaims {
  /** The token holding the endpoint now, when its claim has not lapsed. */
  holder(id: string): string | undefined;
  /**
   * Applies Store.setResponder's action: the `responder` message to announce (claim, release),
   * null for a renewal (nothing to announce), or false when `token` does not hold the endpoint
   * (renew, release).
   */
  apply(id: string, token: string, untilMs: number, action: 'claim' | 'renew' | 'release'): string | null | false;
  /** The endpoint is gone. */
  forget(id: string): void;
}

export function createResponderClaims(now: () => number): ResponderClaims {
  const claims = new Map<string, { token: string; untilMs: number }>();
  const holder = (id: string) => {
    const claim = claims.get(id);
    return claim !== undefined && claim.untilMs > now() ? claim.token : undefined;
  };
  return {
    holder,
    apply(id, token, untilMs, action) {
      if (action !== 'claim' && holder(id) !== token) return false;
      if (action === 'release') {
        claims.delete(id);
        return responderMessage(null);
      }
      claims.set(id, { token, untilMs });
      return action === 'claim' ? responderMessage(token) : null;
    },
    forget: (id) => void claims.delete(id),
  };
}
