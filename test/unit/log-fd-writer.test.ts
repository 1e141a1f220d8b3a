/**
 * The writer against a real OS pipe (a FIFO): this process holds both ends, so a test decides when
 * the reader reads, stalls or goes away, and the kernel's pipe buffer does the rest.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import { FdWriter } from '../../src/actors/logs/fd-writer.ts';

type Trouble = { event: 'dropping' | 'flowing' | 'closed'; detail: Record<string, unknown> };

interface Pipe {
  readonly writeFd: number;
  /** Reads what the pipe holds now, without waiting. */
  read(): string;
  closeReader(): void;
}

/** A FIFO opened at both ends; the write end blocking or not, as stdout may be either. */
function pipe(t: TestContext, blocking = false): Pipe {
  const dir = mkdtempSync(join(tmpdir(), 'fd-writer-'));
  const path = join(dir, 'pipe');
  execFileSync('mkfifo', [path]);
  // The read end first, non-blocking, so that opening the write end does not wait for a reader.
  let readFd: number | null = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(path, constants.O_WRONLY | (blocking ? 0 : constants.O_NONBLOCK));
  const buf = Buffer.alloc(64 * 1024);
  const closeReader = () => {
    if (readFd !== null) closeSync(readFd);
    readFd = null;
  };
  t.after(() => {
    // Closing the reader first unblocks a write still waiting on a blocking descriptor (EPIPE).
    closeReader();
    closeSync(writeFd);
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    writeFd,
    read() {
      let out = '';
      for (;;) {
        let n: number;
        try {
          n = readSync(readFd!, buf, 0, buf.length, null);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return out;
          throw err;
        }
        if (n === 0) return out;
        out += buf.toString('latin1', 0, n);
      }
    },
    closeReader,
  };
}

const lineOf = (i: number, width: number) => `line ${String(i).padStart(6, '0')} ${'x'.repeat(width)}`;

/** Reads continuously (every millisecond) until stopped; what was read, in order. */
function reader(p: Pipe) {
  let text = '';
  const timer = setInterval(() => { text += p.read(); }, 1);
  return {
    stop() {
      clearInterval(timer);
      text += p.read();
      return text;
    },
  };
}

/**
 * Pushes lines, each once the one before left the writer (or 50 ms passed: the pipe is full; a
 * busy machine may take a few ms to run a write), until the writer refuses one; the lines it took.
 */
async function pushUntilRefused(w: FdWriter, width: number, max = 20_000): Promise<{ accepted: string[]; turns: number }> {
  const accepted: string[] = [];
  for (let i = 0; i < max; i++) {
    const line = lineOf(i, width);
    if (!w.push(line)) return { accepted, turns: i + 1 };
    accepted.push(line);
    for (let k = 0; k < 50 && w.waiting > 0; k++) await sleep(1);
  }
  assert.fail(`the writer took ${max} lines into a stalled pipe`);
}

/**
 * Waits for `done` with the event loop held open: the writer's retry timer is unref'd (a stalled
 * output must not keep the process alive), and in the gateway the worker's port holds the loop.
 */
async function alive<T>(done: Promise<T>): Promise<T> {
  const hold = setInterval(() => {}, 1_000);
  try {
    return await done;
  } finally {
    clearInterval(hold);
  }
}

test('idle resolves at once on a writer with nothing to write', async (t) => {
  const p = pipe(t);
  await new FdWriter(p.writeFd).idle();
});

test('lines arrive whole and in order through a pipe that is read, many times the pipe\'s own buffer', async (t) => {
  const p = pipe(t);
  const troubles: Trouble[] = [];
  const w = new FdWriter(p.writeFd, { onTrouble: (event, detail) => troubles.push({ event, detail }) });
  const r = reader(p);
  const lines: string[] = [];
  // About 1 MB: the pipe (64 KiB) fills again and again, so writes come back short or refused.
  for (let i = 0; i < 5_000; i++) {
    const line = lineOf(i, 190 + (i % 17));
    lines.push(line);
    assert.equal(w.push(line), true);
    if (i % 500 === 0) await tick();
  }
  await w.idle();
  const text = r.stop();
  assert.equal(text, lines.join('\n') + '\n');
  assert.equal(w.written, 5_000);
  assert.equal(w.dropped, 0);
  assert.equal(w.waiting, 0);
  assert.deepEqual(troubles, []);
});

for (const blocking of [false, true]) {
  test(`a stalled reader (${blocking ? 'blocking' : 'non-blocking'} descriptor): bounded wait, drops counted, dropping then flowing told once, the event loop free`, async (t) => {
    const p = pipe(t, blocking);
    const troubles: Trouble[] = [];
    const w = new FdWriter(p.writeFd, { capacity: 4_096, onTrouble: (event, detail) => troubles.push({ event, detail }) });

    // Nobody reads: the pipe fills, then the writer's own 4 KiB, then it refuses.
    const { accepted, turns } = await pushUntilRefused(w, 400);
    // The pipe took lines until its buffer was full (64 KiB, less what page boundaries waste).
    assert.ok(w.written * 400 > 32 * 1024, `the pipe's buffer was filled first: ${accepted.length} taken, ${w.written} written`);
    assert.equal(w.dropped, 1);
    assert.ok(w.waiting > 0 && w.waiting * 408 <= 4_096, `waiting ${w.waiting} lines, within the capacity`);
    assert.deepEqual(troubles.map((x) => x.event), ['dropping']);
    assert.equal(troubles[0]!.detail.fd, p.writeFd);

    // The event loop keeps turning while the write waits: immediates and timers still run.
    let idle = false;
    void w.idle().then(() => { idle = true; });
    let turnsWhileStalled = 0;
    const started = Date.now();
    while (Date.now() - started < 150) {
      await tick();
      turnsWhileStalled += 1;
    }
    await sleep(20);
    assert.ok(turnsWhileStalled > 10, `only ${turnsWhileStalled} event-loop turns in 150 ms`);
    assert.equal(idle, false, 'still stalled');

    for (let i = 0; i < 50; i++) assert.equal(w.push(lineOf(turns + i, 400)), false);
    assert.equal(w.dropped, 51);
    assert.deepEqual(troubles.map((x) => x.event), ['dropping'], 'told once, not per line');

    // The reader resumes: what was accepted arrives whole and in order, and the writer says so.
    const r = reader(p);
    await w.idle();
    assert.equal(idle, true);
    assert.deepEqual(troubles.map((x) => x.event), ['dropping', 'flowing']);
    assert.equal(troubles[1]!.detail.dropped, 51);
    const later = lineOf(999_999, 10);
    assert.equal(w.push(later), true);
    await w.idle();
    const text = r.stop();
    assert.equal(text, [...accepted, later].join('\n') + '\n');
    assert.equal(w.written, accepted.length + 1);
    assert.equal(w.dropped, 51);
    assert.deepEqual(troubles.map((x) => x.event), ['dropping', 'flowing']);
  });
}

test('a reader that went away (EPIPE): lines dropped and counted, closed told once, nothing thrown', async (t) => {
  const p = pipe(t);
  const troubles: Trouble[] = [];
  const w = new FdWriter(p.writeFd, { onTrouble: (event, detail) => troubles.push({ event, detail }) });
  p.closeReader();
  assert.equal(w.push('first'), true, 'taken: the writer learns of the closed reader when it writes');
  assert.equal(w.push('second'), true);
  await w.idle();
  assert.deepEqual(troubles.map((x) => x.event), ['closed']);
  assert.equal(troubles[0]!.detail.error, 'EPIPE');
  assert.equal(w.dropped, 2);
  assert.equal(w.written, 0);
  for (let i = 0; i < 10; i++) assert.equal(w.push(`after ${i}`), false);
  assert.equal(w.dropped, 12);
  await w.idle();
  assert.deepEqual(troubles.map((x) => x.event), ['closed'], 'neither dropping nor closed again');
});

test('a reader that goes away while lines wait: every line is either written or counted dropped', async (t) => {
  const p = pipe(t);
  const troubles: Trouble[] = [];
  const w = new FdWriter(p.writeFd, { capacity: 4_096, onTrouble: (event, detail) => troubles.push({ event, detail }) });
  const { accepted } = await pushUntilRefused(w, 400);
  assert.ok(w.waiting > 0);
  p.closeReader();
  await alive(w.idle());
  assert.deepEqual(troubles.map((x) => x.event), ['dropping', 'closed']);
  assert.equal(w.waiting, 0);
  // accepted + the one refused line, each accounted for once.
  assert.equal(w.written + w.dropped, accepted.length + 1);
  assert.ok(w.dropped > 1);
  assert.equal(w.push('after'), false);
});

test('a broken onTrouble does not break the writer', async (t) => {
  const p = pipe(t);
  const w = new FdWriter(p.writeFd, { onTrouble: () => { throw new Error('reporting failed'); } });
  p.closeReader();
  w.push('x');
  await w.idle();
  assert.equal(w.dropped, 1);
});

test('pieces of several lines are counted as their lines: written, waiting and dropped', async (t) => {
  const p = pipe(t);
  const troubles: Trouble[] = [];
  const w = new FdWriter(p.writeFd, { capacity: 64, onTrouble: (event, detail) => troubles.push({ event, detail }) });
  assert.equal(w.pushLines('a1\na2\na3', 3), true);
  assert.equal(w.push('b1'), true);
  assert.equal(w.waiting, 4);
  // Past the bound, the whole piece is dropped: its three lines count.
  assert.equal(w.pushLines(`${'x'.repeat(40)}\n${'y'.repeat(10)}\nz`, 3), false);
  assert.equal(w.dropped, 3);
  await w.idle();
  assert.equal(p.read(), 'a1\na2\na3\nb1\n');
  assert.equal(w.written, 4);
  assert.equal(w.waiting, 0);
  assert.equal(w.push('c1'), true);
  await w.idle();
  assert.deepEqual(troubles.map((x) => [x.event, x.detail.dropped ?? x.detail.waiting]), [['dropping', 4], ['flowing', 3]]);
});

test('bytes are written as they lie, in order with text, and released once written; dropped ones counted as their lines', async (t) => {
  const p = pipe(t);
  const w = new FdWriter(p.writeFd);
  const released: string[] = [];
  const bytes = (s: string) => new TextEncoder().encode(s);
  w.push('t1');
  w.pushBytes(bytes('b1\nb2\n'), () => released.push('b1'));
  w.pushLines('t2\nt3', 2);
  w.pushBytes(bytes('b3\n'), () => released.push('b3'));
  assert.equal(w.waiting, 3, 'text lines waiting');
  await w.idle();
  assert.equal(p.read(), 't1\nb1\nb2\nt2\nt3\nb3\n');
  assert.deepEqual(released, ['b1', 'b3']);
  assert.equal(w.written, 3, 'text lines written');
  // A reader that went away: bytes queued and bytes pushed after are dropped, counted, and released.
  p.closeReader();
  w.push('lost');
  w.pushBytes(bytes('l1\nl2\n'), () => released.push('l1'));
  await w.idle();
  w.pushBytes(bytes('l3\n'), () => released.push('l3'));
  assert.equal(w.dropped, 4);
  assert.deepEqual(released, ['b1', 'b3', 'l1', 'l3']);
});
