/**
 * Holds request body chunks between the socket and whoever reads them, pausing the socket when
 * too much waits unread, so a large upload is never held whole.
 */
export class BodyQueue {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private ended = false;
  private failed: Error | undefined;
  private wake: (() => void) | undefined;
  private paused = false;

  constructor(
    private readonly pause: () => void,
    private readonly resume: () => void,
    private readonly highWater = 256 * 1024,
  ) {}

  push(chunk: Uint8Array, last: boolean): void {
    if (chunk.byteLength > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.byteLength;
    }
    if (last) this.ended = true;
    if (!this.ended && this.buffered > this.highWater && !this.paused) {
      this.paused = true;
      this.pause();
    }
    this.notify();
  }

  fail(err: Error): void {
    this.failed = err;
    this.notify();
  }

  get done(): boolean {
    return this.ended;
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *stream(): AsyncGenerator<Uint8Array> {
    for (;;) {
      if (this.failed) throw this.failed;
      const chunk = this.chunks.shift();
      if (chunk) {
        this.buffered -= chunk.byteLength;
        if (this.paused && this.buffered <= this.highWater / 2) {
          this.paused = false;
          this.resume();
        }
        yield chunk;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((r) => { this.wake = r; });
    }
  }
}
