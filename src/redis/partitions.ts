import calculateSlot from 'cluster-key-slot';

/** Hash slots of Redis Cluster. */
const SLOTS = 16384;

/**
 * The hash tags of `count` partitions: every key and channel of a partition carries its tag
 * (`hookwatch:v4:{p0-12}ep:<id>`), so they share one slot. Tag i is chosen so its slot falls in
 * the i-th of `count` equal ranges of the slots: a Cluster's shards, which own ranges, get an
 * even share of the partitions. With one partition (one Redis) the layout is the same.
 */
export function partitionTags(count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const from = Math.floor((i * SLOTS) / count);
    const to = Math.floor(((i + 1) * SLOTS) / count);
    for (let attempt = 0; ; attempt++) {
      const tag = `p${i}-${attempt}`;
      const slot = calculateSlot(tag);
      if (slot >= from && slot < to) return tag;
    }
  });
}

/** The partition of an endpoint id: a stable hash of the id, so every instance agrees. */
export function partitionIndex(id: string, partitions: number): number {
  if (partitions === 1) return 0;
  let hash = 2166136261;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 16777619);
  return (hash >>> 0) % partitions;
}

/** Where an endpoint's keys and channel live: the prefix with its partition's hash tag. */
export function partitionPrefixes(prefix: string, partitions: number): { all: string[]; of: (id: string) => string } {
  const all = partitionTags(partitions).map((tag) => `${prefix}{${tag}}`);
  return { all, of: (id) => all[partitionIndex(id, all.length)] as string };
}
