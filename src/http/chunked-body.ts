/**
 * A body framed in chunks (RFC 9112 7.1), read strictly: a size that is not hexadecimal, a chunk
 * longer than its size, a bare CR or LF in a size line, a line or trailers past their limits are
 * refused, because two readers that disagree on where a body ends disagree on where the next
 * message begins. One reader for the answers of services (pipeline/h1/response-parser.ts) and the
 * requests of clients on the HTTPS doors (tls-h1-connection.ts). Extensions are skipped; trailers
 * are read and dropped (a proxy that forwarded them would have to merge them; this one does not).
 */

export const MAX_CHUNK_LINE = 4096;
export const MAX_TRAILERS = 16 * 1024;

const CRLF = Buffer.from('\r\n');
const HEX_SIZE = /^[0-9a-fA-F]{1,12}$/;

type State = 'size' | 'data' | 'end' | 'trailers' | 'done';

/** Where the body's pieces go: the reader's owner, so that no function is made per message. */
export interface PieceSink {
  data(piece: Buffer): void;
}

export class ChunkedBody {
  #state: State = 'size';
  /** An unfinished size line, chunk end or trailer line. */
  #held: Buffer | null = null;
  /** Bytes of the current chunk still to come. */
  #left = 0;
  #trailerBytes = 0;

  /** `refuse` throws the caller's error, saying why the framing cannot be read. */
  constructor(private readonly refuse: (why: string) => never) {}

  get done(): boolean {
    return this.#state === 'done';
  }

  /**
   * Reads `buf`, handing each piece of the body to `sink.data` (a view of `buf`, valid during the
   * call). Returns the bytes after the body once it ended, or null while it goes on.
   */
  read(buf: Buffer, sink: PieceSink): Buffer | null {
    while (buf.length > 0) {
      switch (this.#state) {
        case 'size': {
          const line = this.#line(buf, MAX_CHUNK_LINE, 'a chunk size line');
          if (line === null) return null;
          buf = line.rest;
          const size = line.text.split(';', 1)[0]!.trim();
          if (!HEX_SIZE.test(size)) this.refuse('a chunk size is not a hexadecimal number');
          this.#left = parseInt(size, 16);
          this.#state = this.#left === 0 ? 'trailers' : 'data';
          break;
        }
        case 'data': {
          const n = Math.min(this.#left, buf.length);
          this.#left -= n;
          sink.data(buf.subarray(0, n));
          buf = buf.subarray(n);
          if (this.#left === 0) this.#state = 'end';
          break;
        }
        case 'end': {
          const line = this.#line(buf, 2, 'the end of a chunk');
          if (line === null) return null;
          if (line.text !== '') this.refuse('a chunk is longer than its size says');
          buf = line.rest;
          this.#state = 'size';
          break;
        }
        case 'trailers': {
          const line = this.#line(buf, MAX_TRAILERS, 'a trailer');
          if (line === null) return null;
          buf = line.rest;
          this.#trailerBytes += line.text.length + 2;
          if (this.#trailerBytes > MAX_TRAILERS) this.refuse('the trailers are too large');
          if (line.text === '') {
            this.#state = 'done';
            return buf;
          }
          break;
        }
        case 'done':
          return buf;
      }
    }
    return this.#state === 'done' ? buf : null;
  }

  /** One CRLF-ended line (held across reads); null when it is not complete yet. */
  #line(buf: Buffer, max: number, what: string): { text: string; rest: Buffer } | null {
    const whole = this.#held ? Buffer.concat([this.#held, buf]) : buf;
    const end = whole.indexOf(CRLF);
    if (end < 0) {
      if (whole.length > max + 1) this.refuse(`${what} is too long`);
      // A copy, unless it is one already (a concatenation): the caller's buffer may be reused.
      this.#held = this.#held === null ? Buffer.from(whole) : whole;
      return null;
    }
    this.#held = null;
    if (end > max) this.refuse(`${what} is too long`);
    const text = whole.toString('latin1', 0, end);
    if (/[\r\n]/.test(text)) this.refuse(`${what} holds a bare CR or LF`);
    return { text, rest: whole.subarray(end + 2) };
  }
}
