import type { PlaneName } from '../settings/settings.ts';

export type OutgoingHeaders = Readonly<Record<string, string | readonly string[]>>;

/** What a request says before its body: all the planes' authentication reads. */
export interface RequestHead {
  readonly plane: PlaneName;
  /** Upper-case method. */
  readonly method: string;
  /** Path as received, still percent-encoded. */
  readonly path: string;
  /** Query string without the `?`. */
  readonly query: string;
  /** Lower-case names; repeated headers joined with ", " (cookies with "; "). */
  readonly headers: Readonly<Record<string, string>>;
  readonly remoteAddress: string;
  readonly secure: boolean;
  /** Clock time the request arrived. */
  readonly receivedAt: number;
  /** The monotonic clock (`performance.now()`) when it arrived: the request record's start. */
  readonly receivedMono: number;
}

/**
 * One request and its answer, independent of the door it came through: the uWS plain doors and
 * the node:tls HTTPS doors both build an Exchange, so the plane handlers serve both.
 */
export interface Exchange extends RequestHead {
  /** The request came as HTTP/1.0 (the HTTPS doors take it; uWS answers it 505): Via names that version. */
  readonly http10: boolean;
  readonly aborted: boolean;
  readonly responded: boolean;
  /** The status handed to the caller (send or writeHead); 0 until then. Records read it at close. */
  readonly status: number;
  /** The door cannot read this request's body as it is framed (chunks on a plain door): answer 411. */
  readonly lengthRequired: boolean;
  /** Runs once when the client goes away before the answer ended. */
  onAbort(fn: () => void): void;
  /** The whole body, refused with `body.too-large` past `limit` bytes. */
  readBody(limit: number): Promise<Buffer>;
  /** The body as it arrives, for streaming it on without holding it whole. */
  bodyStream(): AsyncIterable<Uint8Array>;
  /**
   * Sends a complete answer. For HEAD the body is never written; a `content-length` header then
   * states the length the GET would have had.
   */
  send(status: number, headers: OutgoingHeaders, body?: string | Uint8Array): void;
  /** Starts a streamed answer; follow with write() and end(). */
  writeHead(status: number, headers: OutgoingHeaders): void;
  /**
   * Writes a chunk. false: the client is slow and the chunk waits in a buffer; stop producing
   * until `drained()` resolves (back-pressure). The relay hands views of a read buffer it reuses,
   * so: after true the chunk is the caller's again, and an exchange that keeps any of it copies
   * it; after false the exchange may keep the chunk itself until `drained()` resolves, and the
   * caller changes none of the chunks it wrote until then (it stops reading its source).
   */
  write(chunk: Uint8Array): boolean;
  /** Resolves when buffered output has gone out (or the client went away). */
  drained(): Promise<void>;
  /** Ends a streamed answer; `chunk` is the exchange's from then on (never a buffer the caller reuses). */
  end(chunk?: Uint8Array): void;
  /** Cuts the connection: the only honest end for an answer that broke off half-way. */
  abort(): void;
}

export type ExchangeHandler = (ex: Exchange) => void | Promise<void>;
