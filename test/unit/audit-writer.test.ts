/**
 * The AuditBatcher's queue while the database does not keep up: audited calls (bulk) fill at most
 * part of it, so sign-ins, refusals and changes still find room and are not dropped for them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchWriter, BULK_SHARE } from '../../src/actors/audit/writer.ts';
import { ManualClock } from '../../src/clock/clock.ts';
import type { Logger } from '../../src/log/logger.ts';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet, write() {}, level: () => 'error', onLevel: () => () => {} };

test('a flood of audited calls leaves room for the other lines', async () => {
  let release: () => void = () => {};
  const stalled = new Promise<void>((resolve) => { release = resolve; });
  const written: string[] = [];
  const writer = new BatchWriter<string>({
    clock: new ManualClock(0), log: quiet, capacity: 100, batch: 1000, lingerMs: 0,
    write: async (batch) => { await stalled; written.push(...batch); },
  });
  const calls = Array.from({ length: 150 }, (_, i) => `call ${i}`);
  const lostCalls = writer.add(calls, true);
  assert.equal(lostCalls.length, 150 - 100 * BULK_SHARE, 'calls fill their share only');
  const lines = Array.from({ length: 30 }, (_, i) => `signin ${i}`);
  const lostLines = writer.add(lines);
  assert.equal(lostLines.length, 30 - (100 - 100 * BULK_SHARE), 'the rest of the queue is the other lines\'');
  assert.equal(writer.add(['one more call'], true).length, 1);
  release();
  await writer.settle();
  assert.ok(written.includes('signin 0') && written.includes(`signin ${100 - 100 * BULK_SHARE - 1}`));
});
