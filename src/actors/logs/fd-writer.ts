/**
 * Lines to one file descriptor (standard output or standard error), written from the LogShipper's
 * worker with fs.write on libuv's pool, one write at a time: a reader that stalls (a slow pipe, a
 * log agent that fell behind) blocks neither the main thread nor this worker. What waits is
 * bounded; past the bound lines are dropped and counted, never held without end. Nothing is
 * written to a file of the gateway's own: the runtime rotates what the descriptors lead to.
 *
 * Lines come as text, or as bytes already encoded with their newlines (a region of the access
 * log's shared ring): those are written as they are, without a copy, and released once written.
 * Their bound is the ring's own.
 */
import { write } from 'node:fs';
import { countLines } from '../../workers/byte-ring.ts';
import { DropCount, type OutputTrouble } from './drops.ts';

export interface FdWriterOptions {
  /** Characters waiting at most (default 8 Mi): a proxy for bytes, measured without encoding. */
  readonly capacity?: number;
  /** Told once when lines start being dropped, and once when they flow again. */
  readonly onTrouble?: (event: OutputTrouble, detail: Record<string, unknown>) => void;
}

interface Text {
  readonly text: string;
  readonly count: number;
}

interface Bytes {
  readonly bytes: Uint8Array;
  readonly written: () => void;
}

/**
 * A non-blocking descriptor with a full pipe is tried again after RETRY_MIN_MS, then twice as long
 * each time it is still full, up to RETRY_MAX_MS. A reader that keeps up drains a pipe's 64 KiB in
 * well under a millisecond: a fixed wait of 20 ms held standard output to about 3 MB/s, less than
 * the access log of a loaded node writes (bench/RESULTS.md), while a reader that stalls for good
 * costs a turn every 20 ms.
 */
const RETRY_MIN_MS = 1;
const RETRY_MAX_MS = 20;

export class FdWriter {
  readonly #fd: number;
  readonly #capacity: number;
  readonly #onTrouble: FdWriterOptions['onTrouble'];
  /** Pieces waiting: a line, or several joined by newlines, or bytes with their newlines. */
  #lines: Array<Text | Bytes> = [];
  /** Lines in the text pieces. */
  #waiting = 0;
  /** Characters in the text pieces. */
  #size = 0;
  #writing = false;
  #closed = false;
  /** The wait before trying a full pipe again. */
  #retryMs = RETRY_MIN_MS;
  /** Lines dropped since start (full, or the reader went away). */
  readonly #drops = new DropCount((event, dropped) => {
    this.#tell(event, event === 'dropping' ? { fd: this.#fd, waiting: this.#waiting } : { fd: this.#fd, dropped });
  });
  /** Text lines written since start (bytes are counted where they were made). */
  written = 0;
  #idle: Array<() => void> = [];

  constructor(fd: number, opts: FdWriterOptions = {}) {
    this.#fd = fd;
    this.#capacity = opts.capacity ?? 8 * 1024 * 1024;
    this.#onTrouble = opts.onTrouble;
  }

  /** Queues one line (without its newline); false when it was dropped. */
  push(line: string): boolean {
    return this.pushLines(line, 1);
  }

  /** Queues `count` lines joined by newlines (without the last one), kept or dropped together. */
  pushLines(text: string, count: number): boolean {
    if (this.#closed || this.#size + text.length + 1 > this.#capacity) {
      this.#drops.add(count, !this.#closed);
      return false;
    }
    this.#lines.push({ text, count });
    this.#waiting += count;
    this.#size += text.length + 1;
    this.#wake();
    return true;
  }

  /**
   * Queues bytes that end with a newline, written without a copy; `written` is called once they
   * are out (or dropped), and until then the caller keeps them as they are.
   */
  pushBytes(bytes: Uint8Array, written: () => void): void {
    if (this.#closed) {
      this.#drops.add(countLines(bytes), false);
      written();
      return;
    }
    this.#lines.push({ bytes, written });
    this.#wake();
  }

  /** Text lines waiting (bytes waiting are counted where they were written). */
  get waiting(): number {
    return this.#waiting;
  }

  /** Lines dropped since start (full, or the reader went away). */
  get dropped(): number {
    return this.#drops.total;
  }

  /** Resolves once every line pushed before has been written (or dropped). */
  idle(): Promise<void> {
    if (!this.#writing && this.#lines.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #wake(): void {
    if (this.#writing) return;
    // The lines pushed in this same turn (a batch from the main thread) go out in one write.
    this.#writing = true;
    queueMicrotask(() => this.#next());
  }

  #next(): void {
    const first = this.#lines[0];
    if (first === undefined) {
      this.#writing = false;
      for (const fn of this.#idle.splice(0)) fn();
      return;
    }
    this.#writing = true;
    if ('bytes' in first) {
      this.#lines.shift();
      this.#send(first.bytes, 0, first);
      return;
    }
    // The text pieces up to the first bytes, in one write.
    let end = 1;
    while (end < this.#lines.length && 'text' in this.#lines[end]!) end += 1;
    const pieces = this.#lines.splice(0, end) as Text[];
    let text = '';
    let count = 0;
    for (const piece of pieces) {
      text += `${piece.text}\n`;
      count += piece.count;
    }
    this.#waiting -= count;
    this.#size -= text.length;
    this.#send(Buffer.from(text), count, null);
  }

  /** `count` text lines, or the bytes piece `bytes` (its lines counted only if dropped). */
  #send(buf: Uint8Array, count: number, bytes: Bytes | null): void {
    write(this.#fd, buf, 0, buf.byteLength, null, (err, n) => {
      if (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK' || code === 'EINTR') {
          setTimeout(() => this.#send(buf, count, bytes), this.#retryMs).unref();
          this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
          return;
        }
        // The reader is gone (EPIPE) or the descriptor closed: nothing more can be written.
        this.#closed = true;
        this.#drops.add((bytes ? countLines(buf) : count) + this.#waiting, false);
        bytes?.written();
        for (const piece of this.#lines) {
          if ('text' in piece) continue;
          this.#drops.add(countLines(piece.bytes), false);
          piece.written();
        }
        this.#lines = [];
        this.#waiting = 0;
        this.#size = 0;
        this.#tell('closed', { fd: this.#fd, error: code ?? err.message });
        this.#next();
        return;
      }
      this.#retryMs = RETRY_MIN_MS;
      if (n < buf.byteLength) {
        this.#send(buf.subarray(n), count, bytes);
        return;
      }
      if (bytes) bytes.written();
      else this.written += count;
      this.#drops.flowing();
      this.#next();
    });
  }

  #tell(event: OutputTrouble, detail: Record<string, unknown>): void {
    try {
      this.#onTrouble?.(event, detail);
    } catch {
      // Reporting never breaks the writer.
    }
  }
}
