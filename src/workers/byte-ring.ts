/**
 * Text from one thread to another through shared memory: the main thread writes a chunk of lines
 * into a ring of bytes, and the actor that reads it writes those bytes out where they go, with no
 * message in between. A message costs a copy of the text on each side (serialised on the main
 * thread, read into a string in the worker, encoded again to bytes before a write): for the access
 * log at full load, that was more of the main thread's time than making the lines (bench/RESULTS.md).
 * Here the text is encoded once, straight into the memory the write reads.
 *
 * Positions only grow within a pass; the writer goes back to the start when the end has no room
 * (WRAP says where the pass ended) or when the ring is empty, so that memory is touched only as
 * far as the reader falls behind. Only the reader moves READ, except at that restart: with
 * everything released, the reader holds nothing and moves nothing until it sees new data.
 *
 * One writer, one reader. The writer never waits: a chunk that does not fit is refused, and the
 * caller counts it. The reader takes regions, hands them to its output, and releases each once
 * written; until then the writer cannot reuse that memory. A reader with nothing to read sleeps on
 * the shared word, and the writer wakes it when a chunk lands (a futex, not a message).
 */

/** The memory both sides share; made by the writer's side and handed to the reader at its start. */
export interface ByteRingMemory {
  readonly control: SharedArrayBuffer;
  readonly data: SharedArrayBuffer;
}

/**
 * Control words. WRITE and READ hold a byte offset into `data` and, in bit 30, the parity of the
 * pass round the ring they are in: the writer is at most one pass ahead of the reader, so a
 * parity tells which pass a position belongs to, read in one load with the position.
 */
const WRITE = 0;
/** Released by the reader: the writer may reuse what lies before it. */
const READ = 1;
/** Where the data of the writer's previous pass ended. */
const WRAP = 2;
/** 1 while the reader sleeps, waiting for a chunk. */
const ASLEEP = 3;
const WORDS = 4;
const PASS = 1 << 30;
const AT = PASS - 1;

export function byteRingMemory(bytes: number): ByteRingMemory {
  if (!Number.isInteger(bytes) || bytes < 16 || bytes >= PASS) throw new RangeError(`a byte ring of ${bytes} bytes`);
  return { control: new SharedArrayBuffer(WORDS * 4), data: new SharedArrayBuffer(bytes) };
}

const encoder = new TextEncoder();
const NEWLINE = 10;

export class ByteRingWriter {
  readonly #control: Int32Array;
  readonly #data: Uint8Array;

  constructor(memory: ByteRingMemory) {
    this.#control = new Int32Array(memory.control);
    this.#data = new Uint8Array(memory.data);
  }

  /**
   * Writes `text` and a newline; false, with nothing written, when the reader has not released
   * room for it. An empty ring starts again from its beginning, so memory is touched as far as the
   * reader falls behind, not the whole ring in turn.
   */
  write(text: string): boolean {
    const c = this.#control;
    const write = Atomics.load(c, WRITE);
    const read = Atomics.load(c, READ);
    const w = write & AT;
    const pass = write & PASS;
    const size = this.#data.byteLength;
    // Empty, everything written released, so the reader holds nothing: the next pass starts at
    // once with the whole ring, READ moved with it.
    if (write === read) return w > 0 ? this.#put(text, 0, size, pass ^ PASS, w, true) : this.#put(text, 0, size, pass, -1, false);
    const r = read & AT;
    // One pass ahead of the reader: free up to just before r.
    if ((read & PASS) !== pass) return this.#put(text, w, r - 1, pass, -1, false);
    // The same pass: free to the end, then from the start of the next to just before r.
    return this.#put(text, w, size, pass, -1, false) || this.#put(text, 0, r - 1, pass ^ PASS, w, false);
  }

  /**
   * Writes at `at` in pass `pass` when it fits before `end`. `wrap` >= 0: a new pass, the last
   * one having ended there; `restart`: that one is all released, and READ moves with the writer.
   */
  #put(text: string, at: number, end: number, pass: number, wrap: number, restart: boolean): boolean {
    // At least a byte a code unit and the newline; a text longer in UTF-8 shows in `read`.
    if (end - at < text.length + 1) return false;
    const { read, written } = encoder.encodeInto(text, this.#data.subarray(at, end - 1));
    if (read < text.length) return false;
    const c = this.#control;
    this.#data[at + written] = NEWLINE;
    // The reader reads WRITE, then WRAP: it is in place before WRITE moves.
    if (restart) Atomics.store(c, READ, pass);
    if (wrap >= 0) Atomics.store(c, WRAP, wrap);
    Atomics.store(c, WRITE, (at + written + 1) | pass);
    if (Atomics.load(c, ASLEEP) === 1) {
      Atomics.store(c, ASLEEP, 0);
      Atomics.notify(c, ASLEEP);
    }
    return true;
  }
}

/** A region taken by the reader: its bytes (a view of the shared memory) and what READ becomes once written. */
export interface RingRegion {
  readonly bytes: Uint8Array;
  readonly next: number;
}

export class ByteRingReader {
  readonly #control: Int32Array;
  readonly #data: Uint8Array;
  /** Taken up to here (a position and its pass's parity): ahead of READ by what is taken and not yet written. */
  #taken: number;

  constructor(memory: ByteRingMemory) {
    this.#control = new Int32Array(memory.control);
    this.#data = new Uint8Array(memory.data);
    // A reader that restarts takes again what its predecessor had taken and not released.
    this.#taken = Atomics.load(this.#control, READ);
  }

  /** The next region written and not taken yet, or null when there is none. */
  take(): RingRegion | null {
    const c = this.#control;
    const write = Atomics.load(c, WRITE);
    const taken = this.#taken;
    if (write === taken) return null;
    const t = taken & AT;
    const pass = taken & PASS;
    if ((write & PASS) === pass) {
      this.#taken = write;
      return { bytes: this.#data.subarray(t, write & AT), next: write };
    }
    // The writer is in the next pass: first the end of this one, if anything was left of it.
    const end = Atomics.load(c, WRAP);
    this.#taken = pass ^ PASS;
    if (end > t) return { bytes: this.#data.subarray(t, end), next: this.#taken };
    return this.take();
  }

  /** Regions are released in the order they were taken. */
  release(region: RingRegion): void {
    Atomics.store(this.#control, READ, region.next);
  }

  /** Bytes written and not released, taken or not. */
  get pending(): number {
    let n = 0;
    this.#regions((from, to) => { n += to - from; });
    return n;
  }

  /**
   * Resolves when a chunk may have landed since nothing was left to take: at once when one did.
   * The worker must be kept alive by something else (its message port): a pending wait is not.
   */
  wait(): Promise<void> {
    const c = this.#control;
    Atomics.store(c, ASLEEP, 1);
    // Checked after saying so: a chunk written before the writer could see the flag is not missed.
    if (Atomics.load(c, WRITE) !== this.#taken) {
      Atomics.store(c, ASLEEP, 0);
      return Promise.resolve();
    }
    const waiting = Atomics.waitAsync(c, ASLEEP, 1);
    return waiting.async ? waiting.value.then(() => {}) : Promise.resolve();
  }

  /** Lines (newlines) in the bytes written and not released: for a state answer, not the hot path. */
  lines(): number {
    let n = 0;
    this.#regions((from, to) => { n += countLines(this.#data, from, to); });
    return n;
  }

  #regions(fn: (from: number, to: number) => void): void {
    const c = this.#control;
    const write = Atomics.load(c, WRITE);
    const read = Atomics.load(c, READ);
    if ((write & PASS) === (read & PASS)) fn(read & AT, write & AT);
    else {
      fn(read & AT, Atomics.load(c, WRAP));
      fn(0, write & AT);
    }
  }
}

export function countLines(bytes: Uint8Array, from = 0, to = bytes.byteLength): number {
  let n = 0;
  for (let at = bytes.indexOf(NEWLINE, from); at !== -1 && at < to; at = bytes.indexOf(NEWLINE, at + 1)) n += 1;
  return n;
}
