import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUCKETS, bucketOf, bucketsOf, shardOf } from '../../src/actors/schedules/shards.ts';
import { newId } from '../../src/core/secrets.ts';

test('every bucket belongs to exactly one shard, whatever the shard count', () => {
  for (let shards = 1; shards <= 16; shards++) {
    const owners = new Map<number, number>();
    for (let k = 0; k < shards; k++) {
      for (const b of bucketsOf(k, shards) ?? Array.from({ length: BUCKETS }, (_, i) => i)) {
        assert.equal(owners.has(b), false, `bucket ${b} owned twice with ${shards} shards`);
        owners.set(b, k);
      }
    }
    assert.equal(owners.size, BUCKETS);
  }
});

test('the shard a call is routed to owns the schedule\'s bucket', () => {
  for (let i = 0; i < 500; i++) {
    const id = `sch_${newId()}`;
    for (const shards of [2, 3, 5]) assert.ok(bucketsOf(shardOf(id, shards), shards)!.includes(bucketOf(id)));
  }
});

test('buckets are stable and spread schedules evenly', () => {
  assert.equal(bucketOf('sch_abc'), bucketOf('sch_abc'));
  const counts = new Array<number>(BUCKETS).fill(0);
  const n = 64_000;
  for (let i = 0; i < n; i++) counts[bucketOf(`sch_${newId()}`)]! += 1;
  // 1,000 expected per bucket; a fair hash stays well within ±20 %.
  for (const c of counts) assert.ok(c > 800 && c < 1200, `bucket count ${c} is far from 1000`);
});
