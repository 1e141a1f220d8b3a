/**
 * The byte ring between two threads: what the reader takes is exactly what the writer wrote, in
 * order, whole, across passes round the ring; a writer refused has written nothing; memory is
 * reused as soon as it is released; and a reader in another thread, asleep, wakes for a chunk.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnWorker } from '../../src/workers/spawn.ts';
import { byteRingMemory, ByteRingReader, ByteRingWriter, countLines, type RingRegion } from '../../src/workers/byte-ring.ts';

const decoder = new TextDecoder();
const text = (regions: readonly RingRegion[]) => regions.map((r) => decoder.decode(r.bytes)).join('');

function takeAll(reader: ByteRingReader): RingRegion[] {
  const out: RingRegion[] = [];
  for (let r = reader.take(); r !== null; r = reader.take()) out.push(r);
  return out;
}

test('chunks come out as they went in, each with its newline, UTF-8 exact', () => {
  const memory = byteRingMemory(1024);
  const writer = new ByteRingWriter(memory);
  const reader = new ByteRingReader(memory);
  assert.equal(reader.take(), null);
  assert.ok(writer.write('one\ntwo'));
  assert.ok(writer.write('José → 東京 🦦'));
  const regions = takeAll(reader);
  assert.equal(text(regions), 'one\ntwo\nJosé → 東京 🦦\n');
  assert.equal(reader.lines(), 3);
  assert.equal(reader.pending, Buffer.byteLength('one\ntwo\nJosé → 東京 🦦\n'));
  for (const r of regions) reader.release(r);
  assert.equal(reader.pending, 0);
  assert.equal(reader.lines(), 0);
});

test('a full ring refuses a chunk and writes nothing of it; released room is taken again', () => {
  const memory = byteRingMemory(100);
  const writer = new ByteRingWriter(memory);
  const reader = new ByteRingReader(memory);
  assert.ok(writer.write('a'.repeat(40)));
  assert.ok(writer.write('b'.repeat(40)));
  // 82 bytes used of 100: 41 more fit neither after them nor before the unreleased start.
  assert.equal(writer.write('c'.repeat(40)), false);
  const first = takeAll(reader);
  assert.equal(text(first), `${'a'.repeat(40)}\n${'b'.repeat(40)}\n`);
  assert.equal(writer.write('c'.repeat(40)), false, 'taken is not released');
  for (const r of first) reader.release(r);
  assert.ok(writer.write('c'.repeat(40)));
  // A text longer in UTF-8 than in code units is refused where its bytes do not fit (39 bytes
  // free before the unreleased line), and nothing of it is read.
  assert.equal(writer.write('é'.repeat(30)), false);
  assert.equal(text(takeAll(reader)), `${'c'.repeat(40)}\n`);
  assert.equal(reader.take(), null);
});

test('an empty ring starts again at its beginning: memory is touched only as far as the reader falls behind', () => {
  const memory = byteRingMemory(1 << 20);
  const writer = new ByteRingWriter(memory);
  const reader = new ByteRingReader(memory);
  let furthest = 0;
  for (let i = 0; i < 1000; i++) {
    assert.ok(writer.write(`line ${i} ${'x'.repeat(100)}`));
    for (const r of takeAll(reader)) {
      furthest = Math.max(furthest, r.bytes.byteOffset + r.bytes.byteLength);
      assert.equal(decoder.decode(r.bytes), `line ${i} ${'x'.repeat(100)}\n`);
      reader.release(r);
    }
  }
  assert.ok(furthest <= 2 * 111, `furthest byte used ${furthest}`);
});

test('a reader stalled on the first bytes of a new pass still leaves the writer the rest of the ring', () => {
  const memory = byteRingMemory(1000);
  const writer = new ByteRingWriter(memory);
  const reader = new ByteRingReader(memory);
  assert.ok(writer.write('a'.repeat(100)));
  for (const r of takeAll(reader)) reader.release(r);
  // Empty: the next chunk starts again at the beginning.
  assert.ok(writer.write('b'.repeat(50)));
  const held = takeAll(reader);
  assert.equal(text(held), `${'b'.repeat(50)}\n`);
  assert.equal(held[0]!.bytes.byteOffset, 0);
  // Held (an output that stalls): the 900 bytes after it are free, not only the 100 before the old position.
  assert.ok(writer.write('c'.repeat(500)));
  assert.ok(writer.write('d'.repeat(400)));
  assert.equal(writer.write('e'.repeat(100)), false);
  assert.equal(text(takeAll(reader)), `${'c'.repeat(500)}\n${'d'.repeat(400)}\n`);
});

test('an emptied ring whose reader is away (restarting) gives the writer all of it, and the next reader reads it', () => {
  const memory = byteRingMemory(1000);
  const writer = new ByteRingWriter(memory);
  const gone = new ByteRingReader(memory);
  assert.ok(writer.write('a'.repeat(500)));
  for (const r of takeAll(gone)) gone.release(r);
  // Nobody reads now: the writer starts again at the beginning without the reader's word.
  assert.ok(writer.write('b'.repeat(300)));
  assert.ok(writer.write('c'.repeat(300)));
  assert.ok(writer.write('d'.repeat(300)));
  assert.equal(writer.write('e'.repeat(100)), false);
  const next = new ByteRingReader(memory);
  assert.equal(next.lines(), 3);
  assert.equal(text(takeAll(next)), `${'b'.repeat(300)}\n${'c'.repeat(300)}\n${'d'.repeat(300)}\n`);
});

test('random chunks, random takes and releases: every accepted chunk is read once, in order, whole', () => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const memory = byteRingMemory(4096);
  const writer = new ByteRingWriter(memory);
  let reader = new ByteRingReader(memory);
  const accepted: string[] = [];
  const read: string[] = [];
  let held: RingRegion[] = [];
  let heldText: string[] = [];
  let refused = 0;
  for (let step = 0; step < 20_000; step++) {
    const roll = random();
    if (roll < 0.5) {
      const n = Math.floor(random() * 600);
      const chunk = `${step}:${random() < 0.2 ? 'ü'.repeat(n / 2) : 'a'.repeat(n)}`;
      if (writer.write(chunk)) accepted.push(`${chunk}\n`);
      else refused += 1;
    } else if (roll < 0.75) {
      for (const r of takeAll(reader)) {
        held.push(r);
        heldText.push(decoder.decode(r.bytes));
      }
    } else if (roll < 0.99) {
      const n = Math.floor(random() * (held.length + 1));
      for (const r of held.splice(0, n)) reader.release(r);
      read.push(...heldText.splice(0, n));
    } else {
      // The reader restarts: what it had taken and not released is taken again.
      reader = new ByteRingReader(memory);
      held = [];
      heldText = [];
    }
  }
  for (const r of held) reader.release(r);
  read.push(...heldText);
  for (;;) {
    const rest = takeAll(reader);
    if (rest.length === 0) break;
    for (const r of rest) {
      read.push(decoder.decode(r.bytes));
      reader.release(r);
    }
  }
  assert.ok(refused > 0 && accepted.length > 1000, `${accepted.length} accepted, ${refused} refused`);
  assert.equal(read.join(''), accepted.join(''));
});

test('a reader in another thread sleeps when nothing is left and wakes for each chunk', async () => {
  const memory = byteRingMemory(64 * 1024);
  const writer = new ByteRingWriter(memory);
  const worker = spawnWorker(new URL('../fixtures/ring-reader.ts', import.meta.url), { workerData: { memory } });
  try {
    const next = () => new Promise<unknown>((resolve) => worker.once('message', resolve));
    assert.equal(await next(), 'ready');
    // Resolves once the reader went to sleep having read `length` characters: the writer waits
    // for that, not for a time, so a busy machine cannot merge two of the reader's turns.
    const asleepAfter = (length: number) => new Promise<void>((resolve) => {
      const seen = (m: unknown) => {
        if ((m as { asleepAfter?: number }).asleepAfter !== length) return;
        worker.off('message', seen);
        resolve();
      };
      worker.on('message', seen);
    });
    const expected: string[] = [];
    let length = 0;
    for (let i = 0; i < 200; i++) {
      const chunk = `chunk ${i} ${'z'.repeat(i * 37 % 900)}`;
      // Every few chunks the reader catches up and goes to sleep before the next one.
      const asleep = i % 10 === 9 ? asleepAfter(length + chunk.length + 1) : undefined;
      while (!writer.write(chunk)) await new Promise((r) => setImmediate(r));
      expected.push(`${chunk}\n`);
      length += chunk.length + 1;
      await asleep;
    }
    const done = new Promise<unknown>((resolve) => {
      const last = (m: unknown) => {
        if (typeof m !== 'object' || m === null || !('got' in m)) return;
        worker.off('message', last);
        resolve(m);
      };
      worker.on('message', last);
    });
    assert.ok(writer.write('end'));
    const { got, sleeps } = (await done) as { got: string; sleeps: number };
    assert.equal(got, `${expected.join('')}end\n`);
    assert.ok(sleeps >= 20, `the reader slept ${sleeps} times and was woken each time`);
  } finally {
    await worker.terminate();
  }
});

test('countLines counts the newlines of a range', () => {
  const bytes = new TextEncoder().encode('a\nb\n\nc');
  assert.equal(countLines(bytes), 3);
  assert.equal(countLines(bytes, 2), 2);
  assert.equal(countLines(bytes, 0, 2), 1);
});
