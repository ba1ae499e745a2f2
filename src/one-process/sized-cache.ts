/**
 * A map bounded by what its entries cost, the oldest entry out first when a new one would pass
 * the bound. For values derived from stored ones (the SQLite store's parsed configurations): a
 * value let go is read again from where it is stored, so dropping one is always safe. Oldest
 * first rather than least recently used: a hit costs one lookup and no reordering.
 */
export interface SizedCache<V> {
  get(key: string): V | undefined;
  /** Keeps `value` as costing `bytes`; one costing more than the whole bound is not kept (and any older value of `key` goes). */
  set(key: string, value: V, bytes: number): void;
  delete(key: string): void;
  clear(): void;
  /** What the entries held now cost together. */
  readonly bytes: number;
  readonly size: number;
}

export function createSizedCache<V>(maxBytes: number): SizedCache<V> {
  const entries = new Map<string, { value: V; bytes: number }>();
  let total = 0;
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    total -= entry.bytes;
  };
  return {
    get: (key) => entries.get(key)?.value,
    set(key, value, bytes) {
      remove(key);
      if (bytes > maxBytes) return;
      // Map iterates in insertion order: the first key is the oldest entry.
      for (const oldest of entries.keys()) {
        if (total + bytes <= maxBytes) break;
        remove(oldest);
      }
      entries.set(key, { value, bytes });
      total += bytes;
    },
    delete: remove,
    clear() {
      entries.clear();
      total = 0;
    },
    get bytes() {
      return total;
    },
    get size() {
      return entries.size;
    },
  };
}
