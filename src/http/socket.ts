/**
 * WebSocket routes, independent of the server library: a plane describes what it serves on a
 * socket; the door (uws-door.ts) does the upgrade, the pings, the buffering limit and the close.
 */
import type { Exchange, RequestHead } from './exchange.ts';
import { GatewayError } from './errors.ts';
import { hasToken } from './grammar.ts';

/** Close codes the gateway uses (RFC 6455 7.4.1); docs/live.md says what a client does with each. */
export const CLOSE = {
  /** The client or the session ended it. */
  normal: 1000,
  /** The gateway is stopping: reconnect (another node, or this one once it is back). */
  goingAway: 1001,
  /** The credentials no longer open the feed (signed out, revoked, capability removed). */
  policy: 1008,
  /** A bug on our side; the operational log has it. */
  internal: 1011,
  /** Too slow a reader, or a part of the gateway restarting: reconnect in a moment. */
  tryAgain: 1013,
} as const;

/** Bytes that may wait for a slow client before a door closes it, unless the route says. */
export const SOCKET_BACKPRESSURE = 1024 * 1024;
/** Seconds without traffic before a door pings, unless the route says. */
export const SOCKET_IDLE_S = 60;
/** Text a client may send on a socket; a larger frame closes it. */
export const SOCKET_MAX_PAYLOAD = 16 * 1024;

/**
 * The slow-reader rule both doors apply: a message is refused when more than `limit` bytes already
 * wait, beyond what remains of a message larger than the limit itself (a feed's `hello`, which is
 * always sent whatever its size). Without that allowance, a reader still taking in a 5-MB `hello`
 * was closed at the first event after it, however fast it read (docs/live.md).
 */
export class Backlog {
  /** Bytes of the last oversized message that may still be waiting; 0 once the queue fell within the limit. */
  #allowance = 0;

  constructor(readonly limit: number) {}

  /** Whether a client with `waiting` bytes queued reads too slowly for another message. */
  tooSlow(waiting: number): boolean {
    if (waiting <= this.limit) this.#allowance = 0;
    return waiting > this.limit + this.#allowance;
  }

  /** A message of `bytes` was queued. */
  sent(bytes: number): void {
    if (bytes > this.limit) this.#allowance = Math.max(this.#allowance, bytes);
  }
}

/**
 * What uWS itself may queue: our own rule (Backlog) decides; this only keeps its own drop from
 * taking effect before ours would.
 */
export const UWS_BACKPRESSURE_CEILING = 1024 * 1024 * 1024;

/** A close reason travels in a control frame: at most 123 bytes of UTF-8. */
export function closeReason(reason: string): string {
  let cut = reason;
  while (Buffer.byteLength(cut) > 123) cut = cut.slice(0, -1);
  return cut;
}

/** Runs a session callback; one that throws is a bug: the socket closes with 1011 and the route hears of it. */
export function guarded(route: SocketRoute, socket: Socket | undefined, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    socket?.close(CLOSE.internal, 'internal error; the gateway\'s operational log has the details');
    route.onError(err);
  }
}

/** The upgrade request, copied from the server's request before anything asynchronous ran. */
export type SocketRequest = RequestHead;

/** One open WebSocket, as a session sees it. Messages are JSON text frames. */
export interface Socket {
  /**
   * Sends `message` as JSON. false when it was not sent: the socket is closed, or the client read
   * so slowly that more than the route's `maxBackpressure` was waiting beyond what remains of an
   * oversized message (Backlog; the door then closed it with 1013 and a reason that says so).
   */
  send(message: unknown): boolean;
  /** Closes with a close frame; `reason` is cut to the 123 bytes a frame can carry. */
  close(code: number, reason: string): void;
  /** Bytes waiting to be written to the client. */
  readonly bufferedAmount: number;
  readonly closed: boolean;
}

/**
 * What a route's `accept` returns. `onOpen` runs once the upgrade completed, then `onClose` once,
 * whoever closed; neither runs when the client left during the upgrade, so a session takes its
 * resources in `onOpen`.
 */
export interface SocketSession {
  onOpen(socket: Socket): void;
  /** Text sent by the client; without this, client messages are ignored. */
  onMessage?(text: string): void;
  onClose(code: number, reason: string): void;
}

export interface SocketRoute {
  /** Exact path (no query, no parameters). */
  readonly path: string;
  /**
   * Decides on the upgrade: a session, or a GatewayError, which the door answers as the usual
   * problem+json refusal (an upgrade refused is a plain HTTP answer). Anything else is a bug:
   * the door answers 500 and reports it like a failed request.
   */
  accept(request: SocketRequest): Promise<SocketSession>;
  /** Bytes that may wait for a slow client before the door closes it (default 1 MiB). */
  readonly maxBackpressure?: number;
  /** Seconds without traffic before the door pings, then gives up (default 60; uWS rounds to 4). */
  readonly idleTimeoutS?: number;
  /** A session callback threw: the door closed the socket with 1011 and tells the route here. */
  onError(err: unknown): void;
}

/**
 * The opening handshake's own rules (RFC 6455 4.2.1), checked by both doors before the route
 * decides: uWS upgrades whatever reaches a socket route, so a request that asks for another
 * protocol, or speaks another version, or carries a body, is refused here with a reason.
 */
export function handshakeRefusal(req: SocketRequest): GatewayError | null {
  const h = req.headers;
  if (!hasToken(h.upgrade, 'websocket')) {
    return new GatewayError('upgrade-required', `${req.path} is a WebSocket: the upgrade request must ask for Upgrade: websocket.`);
  }
  const version = (h['sec-websocket-version'] ?? '').trim();
  if (version !== '13') {
    return new GatewayError('upgrade-required', `This WebSocket speaks version 13 of the protocol (RFC 6455); the request asked for ${version === '' ? 'none' : `"${version.slice(0, 20)}"`}.`);
  }
  if (!hasToken(h.connection, 'upgrade')) return new GatewayError('websocket.handshake', 'The upgrade request needs Connection: Upgrade.');
  const key = (h['sec-websocket-key'] ?? '').trim();
  if (!/^[A-Za-z0-9+/]{22}==$/.test(key)) return new GatewayError('websocket.handshake', 'Sec-WebSocket-Key must be 16 bytes in base64 (24 characters).');
  const length = h['content-length'];
  if (h['transfer-encoding'] !== undefined || (length !== undefined && length.trim() !== '0')) {
    return new GatewayError('websocket.handshake', 'An upgrade request carries no body.');
  }
  return null;
}

/**
 * The upgrade request seen as an Exchange, for code that reads only a request's head (the
 * planes' authentication). It has no body, and the door alone answers it: the answering members
 * throw.
 */
export function headExchange(req: SocketRequest): Exchange {
  const answered = (): never => {
    throw new Error('an upgrade request is answered by the door, not through its head');
  };
  return {
    ...req,
    aborted: false, responded: false, status: 0, lengthRequired: false, http10: false,
    onAbort: () => undefined,
    readBody: () => Promise.resolve(Buffer.alloc(0)),
    bodyStream: async function* () {},
    send: answered, writeHead: answered, write: answered, drained: answered, end: answered, abort: answered,
  };
}
