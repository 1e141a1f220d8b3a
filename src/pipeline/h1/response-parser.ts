/**
 * An HTTP/1.1 answer read from an upstream connection (RFC 9112), strictly: whatever could be read
 * two ways (a bare LF, folded or malformed header lines, two different lengths, a length and a
 * chunked coding at once kept for the next answer) is refused or ends the connection, because a
 * proxy that reads an answer differently from its service is how answers get smuggled. Only what a
 * proxy relays is supported: no upgrade (101), no pipelining.
 *
 * Bytes come in as the socket gives them, in a buffer the next read overwrites; the head is read
 * whole (at most MAX_HEAD bytes, the unfinished part copied aside), the body is handed on in slices
 * of that buffer, never copied: the sink copies what it keeps past `data`.
 */
import { hasToken, isFieldValue, isToken } from '../../http/grammar.ts';
import { headerRecord } from '../../http/header-record.ts';
import { ChunkedBody } from '../../http/chunked-body.ts';

/** A refusal of the answer: the connection cannot be trusted for another request. */
export class ProtocolError extends Error {
  readonly code = 'UPSTREAM_PROTOCOL';
}

export interface ParserSink {
  /** The final answer's head (informational 1xx heads are passed over). */
  head(status: number, headers: Record<string, string | string[]>): void;
  /** A slice of the bytes `execute` was given: valid during the call only. */
  data(chunk: Buffer): void;
  /** The answer ended; `reusable`: the connection may carry another request. */
  end(reusable: boolean): void;
}

export const MAX_HEAD = 64 * 1024;

const CRLF_CRLF = Buffer.from('\r\n\r\n');

type State = 'head' | 'length' | 'chunked' | 'close' | 'done';

function refuse(why: string): never {
  throw new ProtocolError(why);
}

export class ResponseParser {
  #state: State = 'head';
  /** Bytes of an unfinished head. */
  #held: Buffer | null = null;
  /** Body bytes still expected (length framing). */
  #left = 0;
  #reusable = true;
  #chunks: ChunkedBody | null = null;

  constructor(
    private readonly sink: ParserSink,
    /** The request was HEAD: the answer has no body whatever its head says. */
    private readonly headRequest: boolean,
  ) {}

  /** The answer has begun (some byte of it arrived): a failure is no longer a stale connection's. */
  started = false;

  get done(): boolean {
    return this.#state === 'done';
  }

  /** Reads the bytes the socket gave; throws ProtocolError on an answer that cannot be read one way only. */
  execute(input: Buffer): void {
    if (input.length > 0) this.started = true;
    let buf = input;
    while (buf.length > 0) {
      switch (this.#state) {
        case 'head': {
          const whole = this.#held ? Buffer.concat([this.#held, buf]) : buf;
          // Search from just before the new bytes: the blank line may straddle two reads.
          const from = this.#held ? Math.max(0, this.#held.length - 3) : 0;
          const end = whole.indexOf(CRLF_CRLF, from);
          if (end < 0) {
            if (whole.length > MAX_HEAD) throw new ProtocolError(`its head is larger than ${MAX_HEAD} bytes`);
            this.#hold(whole);
            return;
          }
          this.#held = null;
          if (end + 4 > MAX_HEAD) throw new ProtocolError(`its head is larger than ${MAX_HEAD} bytes`);
          this.#readHead(whole.toString('latin1', 0, end));
          buf = whole.subarray(end + 4);
          // An answer without a body ends with its head.
          if (this.done) {
            this.#finish(buf);
            return;
          }
          break;
        }
        case 'length': {
          const n = Math.min(this.#left, buf.length);
          this.#left -= n;
          const piece = buf.subarray(0, n);
          buf = buf.subarray(n);
          this.sink.data(piece);
          if (this.#left === 0) this.#finish(buf);
          if (this.done) return;
          break;
        }
        case 'close':
          this.sink.data(buf);
          return;
        case 'chunked': {
          const rest = this.#chunks!.read(buf, this.sink);
          if (rest === null) return;
          this.#finish(rest);
          return;
        }
        case 'done':
          // Bytes after a complete answer, when no request asked for them: the connection is not to be trusted.
          throw new ProtocolError('it sent bytes after its answer');
      }
    }
  }

  /** The connection closed: the end of a close-delimited body, or a cut answer (ProtocolError). */
  closed(): void {
    if (this.#state === 'close') {
      this.#state = 'done';
      this.sink.end(false);
      return;
    }
    if (this.#state !== 'done') throw new ProtocolError(this.#state === 'head' ? 'the connection closed before the answer' : 'the connection closed in the middle of the answer');
  }

  /** A head that cannot be read one way only; a bare CR or LF anywhere in it is named first. */
  #refuse(text: string, why: string): never {
    throw new ProtocolError(BARE_CR_OR_LF.test(text) ? 'its head holds a bare CR or LF' : why);
  }

  #finish(rest: Buffer): void {
    this.#state = 'done';
    // Anything after the answer on a connection used for one request at a time is a fault of the service.
    if (rest.length > 0) this.#reusable = false;
    this.sink.end(this.#reusable);
  }

  /** Keeps an unfinished piece for the next read: a copy, unless it is one already (a concatenation). */
  #hold(whole: Buffer): void {
    this.#held = this.#held === null ? Buffer.from(whole) : whole;
  }

  #readHead(text: string): void {
    // Checked by hand, character by character: a regular expression per line and per value cost
    // more than the rest of the answer's reading (bench/RESULTS.md). Any character out of place
    // sends the head to `#refuse`, which names the fault as the rules below do.
    let eol = text.indexOf('\r\n');
    if (eol < 0) eol = text.length;
    const code = statusOf(text, eol);
    if (code < 0) this.#refuse(text, 'its status line is not HTTP/1.x');
    const headers = headerRecord<string | string[]>();
    // Read with indexOf, not split and a regular expression per line: the head of every answer passes here.
    let at = eol + 2;
    while (at < text.length) {
      let end = text.indexOf('\r\n', at);
      if (end < 0) end = text.length;
      if (isOws(text.charCodeAt(at))) this.#refuse(text, 'it folds a header line');
      const colon = text.indexOf(':', at);
      if (colon <= at || colon >= end) this.#refuse(text, 'a header line has no name');
      const raw = text.slice(at, colon);
      let name = KNOWN_NAMES.get(raw);
      if (name === undefined) {
        if (!isToken(raw)) this.#refuse(text, 'a header name is not a token');
        name = raw.toLowerCase();
      }
      let from = colon + 1;
      let to = end;
      while (from < to && isOws(text.charCodeAt(from))) from++;
      while (to > from && isOws(text.charCodeAt(to - 1))) to--;
      if (!isFieldValue(text, from, to)) this.#refuse(text, 'a header value holds a control character');
      const value = text.slice(from, to);
      const prev = headers[name];
      if (prev === undefined) headers[name] = value;
      else if (typeof prev === 'string') headers[name] = [prev, value];
      else prev.push(value);
      at = end + 2;
    }
    const minor = text.charCodeAt(7);
    if (code < 200) {
      if (code === 101) throw new ProtocolError('it switched protocols, which the gateway does not relay');
      // An informational answer (100, 102, 103): the final one follows.
      return;
    }
    const connection = headers['connection'];
    if (minor === 0x30 /* HTTP/1.0 */ || (connection !== undefined && connection !== 'keep-alive' && hasToken(connection, 'close'))) this.#reusable = false;
    const te = headers['transfer-encoding'];
    const cl = headers['content-length'];
    let length: number | null = null;
    if (typeof cl === 'string' && LENGTH.test(cl)) {
      length = Number(cl);
    } else if (cl !== undefined) {
      const values = (typeof cl === 'string' ? [cl] : cl).flatMap((v) => v.split(',')).map((v) => v.trim());
      if (!values.every((v) => LENGTH.test(v)) || new Set(values).size !== 1) throw new ProtocolError('its Content-Length is not one number');
      length = Number(values[0]);
      // The client is told the length the service stated, once.
      headers['content-length'] = values[0]!;
    }
    const codings = te === undefined ? undefined : (typeof te === 'string' ? te : te.join(',')).split(',').map((v) => v.trim().toLowerCase()).filter((v) => v !== '');
    // Transfer-Encoding is hop-by-hop: the client is told none, so a coding other than the chunked
    // framing the gateway reads (gzip) would reach it as bytes nobody announced.
    if (codings !== undefined && codings.some((c) => c !== 'chunked')) {
      throw new ProtocolError(`its Transfer-Encoding holds ${codings.filter((c) => c !== 'chunked').join(', ')}, a coding the gateway does not undo`);
    }
    // With a coding the length is not the body's (RFC 9112 6.3): the client must never be told it,
    // or the relayed chunks would be written under a length they do not have.
    if (te !== undefined) delete headers['content-length'];
    this.sink.head(code, headers);
    if (this.headRequest || code === 204 || code === 304) {
      this.#state = 'done';
      return;
    }
    if (te !== undefined) {
      // A length beside a coding is the classic smuggling pair: the coding wins and the connection ends with the answer.
      if (cl !== undefined) this.#reusable = false;
      // Every coding is chunked by now; an empty Transfer-Encoding frames nothing: read to the close.
      if (codings!.length > 0) {
        this.#chunks = new ChunkedBody(refuse);
        this.#state = 'chunked';
      } else {
        this.#reusable = false;
        this.#state = 'close';
      }
      return;
    }
    if (length !== null) {
      this.#left = length;
      this.#state = length === 0 ? 'done' : 'length';
      return;
    }
    this.#reusable = false;
    this.#state = 'close';
  }
}

const isOws = (c: number): boolean => c === 32 || c === 9;

/**
 * `HTTP/1.x NNN` and an optional reason of visible characters, spaces and tabs (RFC 9112 4):
 * the status code, or -1.
 */
function statusOf(text: string, eol: number): number {
  if (eol < 12 || !text.startsWith('HTTP/1.')) return -1;
  const minor = text.charCodeAt(7);
  if ((minor !== 0x30 && minor !== 0x31) || text.charCodeAt(8) !== 0x20) return -1;
  const d0 = text.charCodeAt(9) - 0x30;
  const d1 = text.charCodeAt(10) - 0x30;
  const d2 = text.charCodeAt(11) - 0x30;
  if (d0 < 1 || d0 > 9 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) return -1;
  if (eol > 12 && (text.charCodeAt(12) !== 0x20 || !isFieldValue(text, 13, eol))) return -1;
  return d0 * 100 + d1 * 10 + d2;
}
const LENGTH = /^[0-9]{1,15}$/;
/** A CR not followed by LF, or an LF not preceded by CR. */
const BARE_CR_OR_LF = /\r(?!\n)|(?<!\r)\n/;

/** The spellings services use for common names, already known to be tokens: no test and no lower-casing. */
const KNOWN_NAMES: ReadonlyMap<string, string> = new Map(
  ['content-type', 'content-length', 'date', 'server', 'connection', 'keep-alive', 'transfer-encoding', 'etag',
    'cache-control', 'set-cookie', 'last-modified', 'vary', 'location', 'expires', 'accept-ranges', 'content-encoding',
    'x-powered-by', 'access-control-allow-origin', 'strict-transport-security', 'x-content-type-options', 'x-request-id']
    .flatMap((n) => [n, n.replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase())].map((spelling) => [spelling, n] as const)),
);

