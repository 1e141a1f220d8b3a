import { GatewayError } from './errors.ts';

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

/** The body of a request that has none. */
export async function* noBody(): AsyncGenerator<Uint8Array> {}

/**
 * A request's whole body from its queue (none: an empty body), refused with `body.too-large` past
 * `limit` bytes: at once when the stated length is past it, else as soon as what came is.
 */
export async function readWhole(queue: BodyQueue | undefined, declared: number, limit: number): Promise<Buffer> {
  if (declared > limit) throw new GatewayError('body.too-large', `The request body may be at most ${limit} bytes.`);
  if (!queue) return Buffer.alloc(0);
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of queue.stream()) {
    size += chunk.byteLength;
    if (size > limit) throw new GatewayError('body.too-large', `The request body may be at most ${limit} bytes.`);
    parts.push(chunk);
  }
  // A body that came in one piece is already the door's own copy: no second one.
  if (parts.length === 1) return Buffer.from(parts[0]!.buffer, parts[0]!.byteOffset, parts[0]!.byteLength);
  return Buffer.concat(parts, size);
}
