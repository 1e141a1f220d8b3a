/**
 * The bare refusals an HTTPS door writes when a request cannot be read (too large, too slow, not
 * HTTP), the same answers node:http gives, and how the door ends a connection after one. The door's
 * own reader (tls-h1-connection.ts) and node:http's, on a connection handed to it (tls-door.ts),
 * both end that way.
 */
import type { Duplex } from 'node:stream';

const bare = (status: string) => `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`;

export const BAD_REQUEST = bare('400 Bad Request');
export const TIMED_OUT = bare('408 Request Timeout');
export const CHUNK_EXTENSIONS_TOO_LARGE = bare('413 Payload Too Large');
export const TOO_LARGE = bare('431 Request Header Fields Too Large');

/** How long a client may go on sending after the door ended the connection before it is cut. */
const LINGER_MS = 1000;

/**
 * Writes `last` (a refusal, or nothing when the door closes) and ends the connection once the
 * client stops sending, or after LINGER_MS. Closing at once with the client's bytes unread would
 * send a reset, which can overtake what was written last: a client still sending a large head
 * would then see "connection reset" instead of the status (node:http's own handler writes and
 * destroys at once).
 */
export function endAndLinger(socket: Duplex, last = ''): void {
  // A connection already ending (its last answer went with `Connection: close`) is only bounded:
  // a second end would fail the stream and cut what is still on its way.
  if (!socket.writableEnded) socket.end(last, 'latin1');
  // Flowing, with nothing kept: what still comes is read and dropped.
  socket.on('data', drop);
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

function drop(): void {}

/** node:http's answer to what its parser refused on a connection (its `clientError`), as its own handler chooses it. */
export function refusalFor(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW': return TOO_LARGE;
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW': return CHUNK_EXTENSIONS_TOO_LARGE;
    case 'ERR_HTTP_REQUEST_TIMEOUT': return TIMED_OUT;
    default: return BAD_REQUEST;
  }
}
