/**
 * How schedules are shared among a node's ScheduleActors. Each schedule sits in one of 64 fixed
 * buckets, a hash of its id stored with it; actor k of n owns the buckets b with b mod n = k. The
 * bucket never changes, so nodes with different actor counts share one database without
 * rewriting rows, and the main thread routes a call about a schedule to its owner from the id.
 */
export const BUCKETS = 64;

/** FNV-1a over the id's UTF-16 code units: cheap, stable across versions and platforms. */
export function bucketOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % BUCKETS;
}

export function shardOf(id: string, shards: number): number {
  return bucketOf(id) % shards;
}

/** The buckets one shard owns; null when one shard owns them all (no filter needed). */
export function bucketsOf(shard: number, shards: number): number[] | null {
  if (shards === 1) return null;
  return Array.from({ length: BUCKETS }, (_, b) => b).filter((b) => b % shards === shard);
}
