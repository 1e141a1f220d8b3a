/** What node:http gives of a request, read the way the plain doors read theirs. */
import type { IncomingMessage } from 'node:http';
import type { Socket as NetSocket } from 'node:net';
import { headerRecord } from './header-record.ts';

/** IPv4 peers of a dual-stack socket read `::ffff:a.b.c.d`; the plain doors say `a.b.c.d`. */
export function peerAddress(socket: NetSocket): string {
  const a = socket.remoteAddress ?? '';
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}

/**
 * The request's headers from the lines as they came: a repeated line joined to the first with
 * ", " (cookies with "; "), as the plain doors join them. `req.headers` keeps the first of two
 * Host or Authorization lines and drops the other without a word, so two Host lines would pass
 * here where the plain doors refuse them (`request.invalid`).
 */
export function readNodeHeaders(req: IncomingMessage): Record<string, string> {
  const headers = headerRecord();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    const v = raw[i + 1]!;
    const had = headers[k];
    headers[k] = had === undefined ? v : `${had}${k === 'cookie' ? '; ' : ', '}${v}`;
  }
  return headers;
}

