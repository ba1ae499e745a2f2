/**
 * A signal that aborts after `ms`, or when any of `signals` aborts, with a timer this code holds
 * and clears. Not `AbortSignal.any([…, AbortSignal.timeout(ms)])`: on Node 20 a garbage
 * collection can take the timeout signal while the combined one waits, and it then never aborts
 * (nodejs/node issue 57736). Call `clear` once the wait is over, so neither the timer nor the
 * listeners outlive it. Pure (no node: imports): the page and the CLI use it too.
 */
export function deadline(ms: number, ...signals: AbortSignal[]): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const timer = setTimeout(abort, ms);
  // The process may end while a deadline waits (a CLI's last request, a server closing).
  (timer as { unref?: () => void }).unref?.();
  for (const signal of signals) {
    if (signal.aborted) controller.abort();
    else signal.addEventListener('abort', abort, { once: true });
  }
  const clear = () => {
    clearTimeout(timer);
    for (const signal of signals) signal.removeEventListener('abort', abort);
  };
  controller.signal.addEventListener('abort', clear, { once: true });
  return { signal: controller.signal, clear };
}
