/**
 * The Exchange of a request an HTTPS door serves itself (tls-h1-connection.ts): its body, of a
 * stated length, as the connection reads it; its answer written straight to the TLS socket as HTTP/1.1, with the answer rules every
 * door applies (answer-rules.ts) and the framing node:http would give it: a stated length, or
 * chunks when a streamed answer states none (for an HTTP/1.0 client, which reads no chunks, the
 * answer ends with the connection instead); `Date`, and `Connection`/`Keep-Alive` as node:http
 * writes them. node:http's request and response objects (two streams, their listeners and timers)
 * cost about 10 µs of CPU a request on this path (bench/RESULTS.md, "The HTTPS door serves plain
 * requests itself").
 */
import type { TLSSocket } from 'node:tls';
import type { PlaneName } from '../settings/settings.ts';
import { hasToken, isFieldValue, isToken } from './grammar.ts';
import type { Exchange, OutgoingHeaders } from './exchange.ts';
import { bodiless, doorOwned, headLength, statusLine } from './answer-rules.ts';
import type { PlainHead } from './h1-request-head.ts';
import { noBody, readWhole, type BodyQueue } from './body-queue.ts';

/** What the exchange needs of its connection. */
export interface AnswerSide {
  readonly socket: TLSSocket;
  /** The connection ends after this answer (the client asked, or the door drains). */
  readonly closing: boolean;
  /** The answer went to the socket whole, or was cut: the connection takes its next request, or ends. */
  answered(ex: TlsH1Exchange, close: boolean): void;
}

/** node:http's keep-alive lines, with the door's idle time (tls-h1-connection.ts). */
export const KEEP_ALIVE_S = 10;
const KEEP_OPEN = `Connection: keep-alive\r\nKeep-Alive: timeout=${KEEP_ALIVE_S}\r\n`;
const CLOSE = 'Connection: close\r\n';

/** The Date line, made once a second: every answer writes one. */
let dateLine = '';
function date(): string {
  if (dateLine === '') {
    const now = Date.now();
    dateLine = `Date: ${new Date(now).toUTCString()}\r\n`;
    setTimeout(() => { dateLine = ''; }, 1000 - (now % 1000)).unref();
  }
  return dateLine;
}

export class TlsH1Exchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headers: Record<string, string>;
  readonly secure = true;
  readonly lengthRequired = false;
  readonly http10: boolean;
  aborted = false;
  responded = false;
  status = 0;

  #abortHandlers: Array<() => void> | null = null;
  /**
   * The wait of `drained()`, ended by the drain or by the client leaving: one field, where a handler
   * added to the abort handlers at each wait would pile up for the length of a slow download.
   */
  #drainWait: (() => void) | null = null;
  #headSent = false;
  #bodilessHead = false;
  #chunked = false;
  /** The connection ends after this answer. */
  #close = false;
  /** The relayed length the head stated (null: none), and the body bytes written under it. */
  #stated: number | null = null;
  #written = 0;
  /** The answer is over (whole, cut, or the client left): the connection was told. */
  #over = false;
  /** The request body's stated length. */
  readonly #length: number;

  constructor(
    private readonly side: AnswerSide,
    head: PlainHead,
    readonly plane: PlaneName,
    readonly remoteAddress: string,
    readonly receivedMono: number,
    readonly receivedAt: number,
    /** The body as the connection reads it; null when the request has none. */
    private readonly body: BodyQueue | null,
  ) {
    this.#length = head.length;
    this.method = head.method;
    this.path = head.path;
    this.query = head.query;
    this.headers = head.headers;
    this.http10 = head.http10;
  }

  onAbort(fn: () => void): void {
    if (this.aborted) fn();
    else (this.#abortHandlers ??= []).push(fn);
  }

  /** The connection closed: an answer not over by then was cut. */
  gone(): void {
    if (this.#over) return;
    this.#over = true;
    this.responded = true;
    this.aborted = true;
    this.body?.fail(new Error('the client closed the connection'));
    this.#drainWait?.();
    this.#drainWait = null;
    const handlers = this.#abortHandlers;
    this.#abortHandlers = null;
    if (handlers) for (const fn of handlers) fn();
  }

  readBody(limit: number): Promise<Buffer> {
    return readWhole(this.body ?? undefined, this.#length, limit);
  }

  bodyStream(): AsyncIterable<Uint8Array> {
    return this.body ? this.body.stream() : noBody();
  }

  /**
   * The status line and the handler's headers, then Date and Connection. Names and values are
   * checked as node:http checks them: a handler's slip must not split the answer.
   */
  #head(status: number, hdrs: OutgoingHeaders): string {
    let head = `HTTP/1.1 ${statusLine(status)}\r\n`;
    // Closing (the client asked, the door drains, a body is left unread, an HTTP/1.0 answer ends
    // with the connection): the door's own line says so.
    const closing = this.side.closing || this.#close;
    let connection = false;
    for (const name in hdrs) {
      const value = hdrs[name]!;
      if (doorOwned(name, value)) continue;
      if (!isToken(name)) throw new TypeError(`an answer header name is not a token: ${JSON.stringify(name)}`);
      if (name === 'connection') {
        if (closing) continue;
        connection = true;
        if (hasToken(value, 'close')) this.#close = true;
      }
      if (typeof value === 'string') head += line(name, value);
      else for (const one of value) head += line(name, one);
    }
    head += date();
    if (closing) this.#close = true;
    if (!connection) head += this.#close ? CLOSE : KEEP_OPEN;
    return head;
  }

  send(status: number, hdrs: OutgoingHeaders, body?: string | Uint8Array): void {
    if (this.responded) return;
    // Made before anything is marked: a header the check refuses leaves the answer to the error's.
    const head = this.#head(status, hdrs);
    this.responded = true;
    this.status = status;
    const socket = this.side.socket;
    if (this.method === 'HEAD') {
      socket.write(`${head}content-length: ${headLength(hdrs, body)}\r\n\r\n`, 'latin1');
    } else if (bodiless(status)) {
      socket.write(`${head}\r\n`, 'latin1');
    } else {
      const payload = body ?? '';
      const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
      // One write: TLS makes one record of what goes together, one system call.
      socket.cork();
      socket.write(`${head}content-length: ${length}\r\n\r\n`, 'latin1');
      if (length > 0) socket.write(payload);
      socket.uncork();
    }
    this.#finish();
  }

  writeHead(status: number, hdrs: OutgoingHeaders): void {
    if (this.responded || this.#headSent) return;
    const bodilessHead = bodiless(status) || this.method === 'HEAD';
    const length = hdrs['content-length'];
    const stated = typeof length === 'string' && status !== 204;
    // HTTP/1.0 has no chunks: an answer of no stated length ends where the connection ends.
    if (this.http10 && !stated && !bodilessHead) this.#close = true;
    let head = this.#head(status, hdrs);
    this.#headSent = true;
    this.status = status;
    this.#bodilessHead = bodilessHead;
    // A relayed length stays: it is the length of what follows (a 204 announces none).
    if (stated) {
      head += line('content-length', length);
      const n = Number(length);
      if (!this.#bodilessHead && Number.isSafeInteger(n)) this.#stated = n;
    } else if (!this.#bodilessHead && !this.http10) {
      head += 'Transfer-Encoding: chunked\r\n';
      this.#chunked = true;
    }
    // Written at once, in a cork undone at the end of this turn: the bytes written in the same
    // turn go in the same record, and a service that computes its body before sending it has
    // its head with the client meanwhile.
    const socket = this.side.socket;
    socket.cork();
    socket.write(`${head}\r\n`, 'latin1');
    process.nextTick(uncork, socket);
  }

  #body(socket: TLSSocket, chunk: Uint8Array, copy: boolean): boolean {
    // The socket keeps a chunk until TLS took it, and the caller may reuse it (Exchange.write).
    const bytes = copy ? Buffer.from(chunk) : chunk;
    if (!this.#chunked) return socket.write(bytes);
    socket.write(`${chunk.byteLength.toString(16)}\r\n`, 'latin1');
    socket.write(bytes);
    return socket.write('\r\n', 'latin1');
  }

  write(chunk: Uint8Array): boolean {
    if (this.responded || !this.#headSent || this.#bodilessHead) return true;
    this.#written += chunk.byteLength;
    if (this.#stated !== null && this.#written > this.#stated) {
      // Past the stated length the bytes would be read as the client's next answer: the connection is cut instead.
      this.abort();
      return true;
    }
    // An empty chunk would end a chunked body.
    if (chunk.byteLength === 0) return true;
    const socket = this.side.socket;
    socket.cork();
    const ok = this.#body(socket, chunk, true);
    socket.uncork();
    return ok;
  }

  drained(): Promise<void> {
    const socket = this.side.socket;
    if (this.responded || !socket.writableNeedDrain) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#drainWait = resolve;
      socket.once('drain', () => { this.#drainWait = null; resolve(); });
    });
  }

  end(chunk?: Uint8Array): void {
    if (this.responded) return;
    if (!this.#headSent) this.writeHead(200, {});
    const body = chunk !== undefined && !this.#bodilessHead ? chunk : undefined;
    if (this.#stated !== null && this.#written + (body?.byteLength ?? 0) !== this.#stated) {
      // Short of its stated length (or past it) an answer cannot be finished honestly: the cut connection says so.
      this.abort();
      return;
    }
    this.responded = true;
    const socket = this.side.socket;
    socket.cork();
    if (body !== undefined && body.byteLength > 0) this.#body(socket, body, false);
    if (this.#chunked) socket.write('0\r\n\r\n', 'latin1');
    socket.uncork();
    this.#finish();
  }

  abort(): void {
    if (this.responded) return;
    this.responded = true;
    // The connection's close tells `gone`: the handlers of onAbort run, as on the other doors.
    this.side.socket.destroy();
  }

  #finish(): void {
    if (this.#over) return;
    this.#over = true;
    this.side.answered(this, this.#close);
  }
}

function uncork(socket: TLSSocket): void {
  socket.uncork();
}

function line(name: string, value: string): string {
  if (!isFieldValue(value)) throw new TypeError(`the answer header ${name} holds a character a header cannot carry`);
  return `${name}: ${value}\r\n`;
}
