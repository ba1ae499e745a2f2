/**
 * Group commit: items wait for the end of the event loop's turn (setImmediate runs once the
 * turn's I/O callbacks, and the work they started, have run), then up to `maxBatch` of them are
 * committed together, and the rest in the next turn. A lone item waits only for the rest of its
 * turn. If the commit throws, every item in it fails with the error, and nothing else is told.
 */
export function createGroupCommit<Item, Outcome>(options: {
  maxBatch: number;
  /** Commits a batch in arrival order (one transaction), returning each item's outcome; throws to fail them all. */
  commit: (batch: Item[]) => Outcome[];
  /** Tells an item its outcome, once its commit is done. */
  settle: (item: Item, outcome: Outcome) => void;
  /** Tells an item its commit failed. */
  fail: (item: Item, error: unknown) => void;
}): (item: Item) => void {
  const { maxBatch, commit, settle, fail } = options;
  let queued: Item[] = [];
  let scheduled = false;
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(commitQueued);
  };
  const commitQueued = () => {
    scheduled = false;
    const batch = queued.length <= maxBatch ? queued : queued.slice(0, maxBatch);
    queued = batch === queued ? [] : queued.slice(maxBatch);
    if (queued.length > 0) schedule();
    let outcomes: Outcome[];
    try {
      outcomes = commit(batch);
    } catch (error) {
      for (const item of batch) fail(item, error);
      return;
    }
    batch.forEach((item, at) => settle(item, outcomes[at] as Outcome));
  };
  return (item) => {
    queued.push(item);
    schedule();
  };
}
