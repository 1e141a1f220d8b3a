/**
 * Lines to one file descriptor (standard output or standard error), written from the LogShipper's
 * worker with fs.write on libuv's pool, one write at a time: a reader that stalls (a slow pipe, a
 * log agent that fell behind) blocks neither the main thread nor this worker. What waits is
 * bounded; past the bound lines are dropped and counted, never held without end. Nothing is
 * written to a file of the gateway's own: the runtime rotates what the descriptors lead to.
 */
import { write } from 'node:fs';

export interface FdWriterOptions {
  /** Characters waiting at most (default 8 Mi): a proxy for bytes, measured without encoding. */
  readonly capacity?: number;
  /** Told once when lines start being dropped, and once when they flow again. */
  readonly onTrouble?: (event: 'dropping' | 'flowing' | 'closed', detail: Record<string, unknown>) => void;
}

/** A non-blocking descriptor with a full pipe: tried again after this long. */
const RETRY_MS = 20;

export class FdWriter {
  readonly #fd: number;
  readonly #capacity: number;
  readonly #onTrouble: FdWriterOptions['onTrouble'];
  /** Pieces waiting: a line, or several joined by newlines. */
  #lines: string[] = [];
  /** Lines in those pieces. */
  #waiting = 0;
  #size = 0;
  #writing = false;
  #closed = false;
  /** Lines dropped since start (full, or the reader went away). */
  dropped = 0;
  /** Lines written since start. */
  written = 0;
  /** `dropped` when the current episode of dropping began; null while lines flow. */
  #droppedBefore: number | null = null;
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
      if (this.#droppedBefore === null && !this.#closed) {
        this.#droppedBefore = this.dropped;
        this.#tell('dropping', { fd: this.#fd, waiting: this.#waiting });
      }
      this.dropped += count;
      return false;
    }
    this.#lines.push(text);
    this.#waiting += count;
    this.#size += text.length + 1;
    if (!this.#writing) {
      // The lines pushed in this same turn (a batch from the main thread) go out in one write.
      this.#writing = true;
      queueMicrotask(() => this.#next());
    }
    return true;
  }

  get waiting(): number {
    return this.#waiting;
  }

  /** Resolves once every line pushed before has been written (or dropped). */
  idle(): Promise<void> {
    if (!this.#writing && this.#waiting === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #next(): void {
    if (this.#lines.length === 0) {
      this.#writing = false;
      for (const fn of this.#idle.splice(0)) fn();
      return;
    }
    this.#writing = true;
    const lines = this.#lines;
    const count = this.#waiting;
    this.#lines = [];
    this.#waiting = 0;
    this.#size = 0;
    this.#send(Buffer.from(lines.join('\n') + '\n'), count);
  }

  #send(buf: Buffer, count: number): void {
    write(this.#fd, buf, 0, buf.byteLength, null, (err, n) => {
      if (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK' || code === 'EINTR') {
          setTimeout(() => this.#send(buf, count), RETRY_MS).unref();
          return;
        }
        // The reader is gone (EPIPE) or the descriptor closed: nothing more can be written.
        this.#closed = true;
        this.dropped += count + this.#waiting;
        this.#lines = [];
        this.#waiting = 0;
        this.#size = 0;
        this.#tell('closed', { fd: this.#fd, error: code ?? err.message });
        this.#next();
        return;
      }
      if (n < buf.byteLength) {
        this.#send(buf.subarray(n), count);
        return;
      }
      this.written += count;
      if (this.#droppedBefore !== null) {
        this.#tell('flowing', { fd: this.#fd, dropped: this.dropped - this.#droppedBefore });
        this.#droppedBefore = null;
      }
      this.#next();
    });
  }

  #tell(event: 'dropping' | 'flowing' | 'closed', detail: Record<string, unknown>): void {
    try {
      this.#onTrouble?.(event, detail);
    } catch {
      // Reporting never breaks the writer.
    }
  }
}
