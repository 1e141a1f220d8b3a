/** What node:http gives of a request, read the way the plain doors read theirs. */
import type { IncomingMessage } from 'node:http';
import type { Socket as NetSocket } from 'node:net';
import { headerRecord } from './header-record.ts';

/** IPv4 peers of a dual-stack socket read `::ffff:a.b.c.d`; the plain doors say `a.b.c.d`. */
export function peerAddress(socket: NetSocket): string {
  const a = socket.remoteAddress ?? '';
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}

export function readNodeHeaders(req: IncomingMessage): Record<string, string> {
  const headers = headerRecord();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    headers[k] = Array.isArray(v) ? v.join(k === 'cookie' ? '; ' : ', ') : v;
  }
  return headers;
}

