import { responderMessage } from '../shared/server-messages.js';

/**
 * Responder claims (`hookwatch forward --respond`) held in this process: the memory and SQLite
 * stores' sockets are all here, so the claims are too, and die with the process. The Redis store
 * keeps them in the endpoint's hash instead (lua/set-responder.lua).
 */
export interface ResponderClaims {
  /** The token holding the endpoint now: the latest claim that has not lapsed. */
  holder(id: string): string | undefined;
  /**
   * Applies Store.setResponder's action: the `responder` message to announce when the holder
   * changed, null when it did not, or false when `token` has no claim that holds or waits
   * (renew, release).
   */
  apply(id: string, token: string, untilMs: number, action: 'claim' | 'renew' | 'release'): string | null | false;
  /** The endpoint is gone. */
  forget(id: string): void;
}

/**
 * How many claims an endpoint keeps: the latest holds, the ones before wait their turn, so when
 * the latest `--respond` stops, the one started before it answers again.
 */
export const MAX_RESPONDER_CLAIMS = 8;

export function createResponderClaims(now: () => number): ResponderClaims {
  /** Per endpoint, claims oldest first; each renews its own, the last living one holds. */
  const claims = new Map<string, Array<{ token: string; untilMs: number }>>();
  /** The holder last announced, per endpoint: a change of holder is announced once. */
  const announced = new Map<string, string | undefined>();
  const holder = (id: string) => {
    const at = now();
    const queue = claims.get(id) ?? [];
    for (let i = queue.length - 1; i >= 0; i--) if ((queue[i]?.untilMs ?? 0) > at) return queue[i]?.token;
    return undefined;
  };
  return {
    holder,
    apply(id, token, untilMs, action) {
      const at = now();
      const queue = (claims.get(id) ?? []).filter((claim) => claim.untilMs > at);
      const mine = queue.findIndex((claim) => claim.token === token);
      if (action !== 'claim' && mine === -1) return false;
      if (action === 'renew') (queue[mine] as { untilMs: number }).untilMs = untilMs;
      else if (mine !== -1) queue.splice(mine, 1);
      if (action === 'claim') queue.push({ token, untilMs });
      while (queue.length > MAX_RESPONDER_CLAIMS) queue.shift();
      if (queue.length > 0) claims.set(id, queue);
      else claims.delete(id);
      const current = holder(id);
      if (action !== 'claim' && announced.get(id) === current) return null;
      announced.set(id, current);
      return responderMessage(current ?? null);
    },
    forget(id) {
      claims.delete(id);
      announced.delete(id);
    },
  };
}
