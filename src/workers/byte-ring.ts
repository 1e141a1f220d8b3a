/**
 * Text from one thread to another through shared memory: the main thread writes a chunk of lines
 * into a ring of bytes, and the actor that reads it writes those bytes out where they go, with no
 * message in between. A message costs a copy of the text on each side (serialised on the main
 * thread, read into a string in the worker, encoded again to bytes before a write): for the access
 * log at full load, that was more of the main thread's time than making the lines (bench/RESULTS.md).
 * Here the text is encoded once, straight into the memory the write reads.
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

/** Control words: positions are byte offsets into `data`. */
const WRITE = 0;
/** Released by the reader: the writer may reuse what lies before it. */
const READ = 1;
/** Where the data ended when the writer went back to the start. */
const WRAP = 2;
/** 1 while the reader sleeps, waiting for a chunk. */
const ASLEEP = 3;
const WORDS = 4;

export function byteRingMemory(bytes: number): ByteRingMemory {
  if (!Number.isInteger(bytes) || bytes < 16 || bytes > 0x7fff_ffff) throw new RangeError(`a byte ring of ${bytes} bytes`);
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
    const w = Atomics.load(c, WRITE);
    const r = Atomics.load(c, READ);
    // Free: from w to the end and from the start to just before r, or from w to just before r
    // (w never reaches r from behind: equal positions mean empty).
    if (w >= r) {
      // Empty: back to the start when the text fits before r (the reader tells a new pass by a
      // position behind the one it reached).
      const empty = w === r && w > 0;
      if (empty && this.#put(text, 0, r - 1, w)) return true;
      return this.#put(text, w, this.#data.byteLength, -1) || (!empty && this.#put(text, 0, r - 1, w));
    }
    return this.#put(text, w, r - 1, -1);
  }

  /** Writes at `at` when it fits before `end`; `wrap` >= 0: the data of the pass before ends there. */
  #put(text: string, at: number, end: number, wrap: number): boolean {
    // At least a byte a code unit and the newline; a text longer in UTF-8 shows in `read`.
    if (end - at < text.length + 1) return false;
    const { read, written } = encoder.encodeInto(text, this.#data.subarray(at, end - 1));
    if (read < text.length) return false;
    const c = this.#control;
    this.#data[at + written] = NEWLINE;
    if (wrap >= 0) Atomics.store(c, WRAP, wrap);
    Atomics.store(c, WRITE, at + written + 1);
    if (Atomics.load(c, ASLEEP) === 1) {
      Atomics.store(c, ASLEEP, 0);
      Atomics.notify(c, ASLEEP);
    }
    return true;
  }
}

/** A region taken by the reader: its bytes (a view of the shared memory) and where READ goes once written. */
export interface RingRegion {
  readonly bytes: Uint8Array;
  readonly next: number;
}

export class ByteRingReader {
  readonly #control: Int32Array;
  readonly #data: Uint8Array;
  /** Taken up to here: ahead of READ by what is taken and not yet written. */
  #taken: number;
  /**
   * The end of a pass that had nothing left when the writer started again from the start: READ
   * goes to the start as soon as it reaches it, so that the writer has the rest of the ring while
   * the new pass's first bytes are still being written out.
   */
  #passEnd = -1;

  constructor(memory: ByteRingMemory) {
    this.#control = new Int32Array(memory.control);
    this.#data = new Uint8Array(memory.data);
    // A reader that restarts takes again what its predecessor had taken and not released.
    this.#taken = Atomics.load(this.#control, READ);
  }

  /** The next region written and not taken yet, or null when there is none. */
  take(): RingRegion | null {
    const c = this.#control;
    const w = Atomics.load(c, WRITE);
    const t = this.#taken;
    if (t === w) return null;
    if (t < w) {
      this.#taken = w;
      return { bytes: this.#data.subarray(t, w), next: w };
    }
    // The writer went back to the start: first the end of the previous pass.
    const end = Atomics.load(c, WRAP);
    this.#taken = 0;
    if (end > t) return { bytes: this.#data.subarray(t, end), next: 0 };
    if (Atomics.load(c, READ) === t) Atomics.store(c, READ, 0);
    else this.#passEnd = t;
    return this.take();
  }

  /** Regions are released in the order they were taken. */
  release(region: RingRegion): void {
    let next = region.next;
    if (next === this.#passEnd) {
      next = 0;
      this.#passEnd = -1;
    }
    Atomics.store(this.#control, READ, next);
  }

  /** Bytes written and not released, taken or not. */
  get pending(): number {
    const w = Atomics.load(this.#control, WRITE);
    const r = Atomics.load(this.#control, READ);
    return w >= r ? w - r : Atomics.load(this.#control, WRAP) - r + w;
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
    const c = this.#control;
    const w = Atomics.load(c, WRITE);
    const r = Atomics.load(c, READ);
    return w >= r ? countLines(this.#data, r, w) : countLines(this.#data, r, Atomics.load(c, WRAP)) + countLines(this.#data, 0, w);
  }
}

export function countLines(bytes: Uint8Array, from = 0, to = bytes.byteLength): number {
  let n = 0;
  for (let at = bytes.indexOf(NEWLINE, from); at !== -1 && at < to; at = bytes.indexOf(NEWLINE, at + 1)) n += 1;
  return n;
}
