/**
 * A streamed answer whose length the upstream stated, on a uWS response. `res.write()` would send
 * it chunked and lose the Content-Length a client uses for progress and to tell a cut answer from
 * a whole one; `tryEnd(chunk, total)` writes that length and streams the body under it. Unlike
 * write(), tryEnd keeps nothing it could not send: the rest of the chunk, and every chunk after
 * it, wait here until the socket is writable again (uWS's onWritable hands the offset reached).
 */
import type * as uWS from 'uWebSockets.js';

const EMPTY = new Uint8Array(0);

export class StatedLengthBody {
  /** Every stated byte went out: uWS ended the response itself, and `res` must not be touched again. */
  complete = false;
  private readonly backlog: Uint8Array[] = [];
  /** The write offset at which backlog[0] begins. */
  private from = 0;
  private waiters: Array<() => void> = [];
  private ending = false;
  private gone = false;
  /** Body bytes handed to `write` so far. */
  private given = 0;
  private told = false;

  constructor(
    private readonly res: uWS.HttpResponse,
    private readonly total: number,
    /** Told once when the answer is over: whole, or cut because the body ended short of its length. */
    private readonly onEnded: (whole: boolean) => void,
    /** Writes the answer's head if it has not gone out yet: called inside the cork of each write, before the body. */
    private readonly head: () => void = () => {},
  ) {}

  /**
   * false: the socket is behind, wait for `drained()` before writing more. What uWS did not take
   * waits in the backlog as the caller gave it, not copied: the caller leaves it alone until
   * `drained()` (Exchange.write).
   */
  write(chunk: Uint8Array): boolean {
    if (this.complete || this.gone) return true;
    this.given += chunk.byteLength;
    if (this.given > this.total) {
      // More than the stated length: written under it, the rest would reach the client as the
      // start of its next answer. Nothing of this chunk goes; the connection is cut.
      this.ending = true;
      this.abandon();
      this.res.close();
      this.tellEnded(false);
      return true;
    }
    if (this.backlog.length > 0) {
      this.backlog.push(chunk);
      return false;
    }
    let taken = true;
    this.res.cork(() => {
      this.head();
      const from = this.res.getWriteOffset();
      const [ok, done] = this.res.tryEnd(chunk, this.total);
      if (done) this.complete = true;
      else if (!ok) {
        this.backlog.push(chunk);
        this.from = from;
        this.res.onWritable((offset: number) => this.flush(offset));
        taken = false;
      }
    });
    return taken;
  }

  /** Sends the head now, with its length and no byte of the body (uWS writes a head only with a write). */
  open(): void {
    if (this.complete || this.gone || this.backlog.length > 0) return;
    this.res.cork(() => {
      this.head();
      this.res.tryEnd(EMPTY, this.total);
    });
  }

  drained(): Promise<void> {
    if (this.backlog.length === 0 || this.gone) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The body ended: the answer is over once the backlog went out; short of its length, the connection is cut. */
  end(): void {
    this.ending = true;
    if (this.backlog.length === 0) this.close();
  }

  /** The client went away: nothing more is sent, and whoever waits is let go. */
  abandon(): void {
    this.gone = true;
    this.backlog.length = 0;
    this.release();
  }

  private flush(offset: number): boolean {
    if (this.gone) return true;
    while (this.backlog.length > 0) {
      const chunk = this.backlog[0]!;
      const [ok, done] = this.res.tryEnd(chunk.subarray(offset - this.from), this.total);
      if (done) {
        this.complete = true;
        this.backlog.length = 0;
        break;
      }
      if (!ok) return false;
      this.backlog.shift();
      offset = this.from = this.res.getWriteOffset();
    }
    this.release();
    if (this.ending) this.close();
    return true;
  }

  private close(): void {
    // A body shorter than its stated length cannot be finished honestly: the cut connection says so.
    if (!this.complete && !this.gone) this.res.close();
    this.tellEnded(this.complete);
  }

  private tellEnded(whole: boolean): void {
    if (this.told) return;
    this.told = true;
    this.onEnded(whole);
  }

  private release(): void {
    for (const fn of this.waiters.splice(0)) fn();
  }
}
