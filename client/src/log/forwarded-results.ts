// Kept apart from the rendering (no DOM here), so the bounds can be tested without a browser.
import type { ForwardedMessage } from '../../../src/shared/protocol.js';

/** Results kept per request: several forwarders (or a replay) may each report one. */
export const RESULTS_PER_SEQ = 5;
/** Requests not held (not arrived yet, or gone) whose results are kept, in case they show up. */
export const LOOSE_SEQS = 50;

/**
 * Results by seq. A result may arrive before its request (the forwarder's report can overtake
 * the request on another socket, or come during a resume), so results for requests the page does
 * not hold are kept too, bounded: the newest results per seq, the highest seqs among loose ones.
 */
export class ForwardedResults {
  private readonly bySeq = new Map<number, ForwardedMessage[]>();

  constructor(private readonly isHeld: (seq: number) => boolean) {}

  add(message: ForwardedMessage): void {
    const results = this.bySeq.get(message.seq) ?? [];
    results.push(message);
    if (results.length > RESULTS_PER_SEQ) results.splice(0, results.length - RESULTS_PER_SEQ);
    this.bySeq.set(message.seq, results);
    this.pruneLoose();
  }

  get(seq: number): readonly ForwardedMessage[] {
    return this.bySeq.get(seq) ?? [];
  }

  /** The log was cleared up to `seq`: those requests never come back. */
  dropThrough(seq: number): void {
    for (const held of this.bySeq.keys()) if (held <= seq) this.bySeq.delete(held);
  }

  /** Request `seq` was deleted: its results go with it. */
  dropOne(seq: number): void {
    this.bySeq.delete(seq);
  }

  clear(): void {
    this.bySeq.clear();
  }

  /** Lowest seqs go first: they belong to requests long gone, while high ones may still arrive. */
  private pruneLoose(): void {
    const loose = [...this.bySeq.keys()].filter((seq) => !this.isHeld(seq)).sort((a, b) => a - b);
    for (const seq of loose.slice(0, Math.max(0, loose.length - LOOSE_SEQS))) this.bySeq.delete(seq);
  }
}
