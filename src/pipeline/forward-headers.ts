/**
 * Headers across the gateway, both ways. Toward the upstream: what describes the client's
 * connection or claims an identity or a proxy chain is dropped, and the gateway states the facts
 * itself. Toward the client: the upstream connection's own headers stay behind.
 */
import { HOP_BY_HOP, droppedFromRequest } from '../http/gateway-headers.ts';
import { headerRecord } from '../http/header-record.ts';

export interface ForwardOptions {
  /** The client's address; null for a call the gateway makes itself (no client, no forwarding facts). */
  readonly remoteAddress: string | null;
  readonly secure: boolean;
  /** Cookie names of the gateway's own sessions: removed from the Cookie header sent upstream (header dropped when nothing is left). */
  readonly ownCookies: ReadonlySet<string>;
  /** The caller authenticated with a gateway token: Authorization is not forwarded. */
  readonly dropAuthorization: boolean;
  /** This gateway's Via entry, added after the caller's (RFC 9110 7.6.3). */
  readonly via: string;
}

/**
 * Connection may name any header as hop-by-hop; framing must not be one of them, or the body
 * would reach the upstream without its declared length.
 */
const NEVER_CONNECTION_LISTED: ReadonlySet<string> = new Set(['content-length']);

/** incoming: lower-case names, already joined values (cookie with '; '). Returns a new record. */
export function forwardRequestHeaders(incoming: Readonly<Record<string, string>>, opts: ForwardOptions): Record<string, string> {
  const out = headerRecord();
  const connection = incoming['connection'];
  const listed = connection === undefined ? undefined : connectionNames(connection);
  for (const name in incoming) {
    if (droppedFromRequest(name)) continue;
    if (listed !== undefined && listed.has(name) && !NEVER_CONNECTION_LISTED.has(name)) continue;
    // HTTP/2 pseudo-headers are not headers; undici throws on them.
    if (name.charCodeAt(0) === 58 /* ':' */) continue;
    const value = incoming[name]!;
    if (name === 'authorization') {
      if (!opts.dropAuthorization) out[name] = value;
    } else if (name === 'cookie') {
      const kept = opts.ownCookies.size === 0 ? value : withoutCookies(value, opts.ownCookies);
      if (kept !== '') out[name] = kept;
    } else {
      out[name] = value;
    }
  }
  const via = out['via'];
  out['via'] = via === undefined ? opts.via : `${via}, ${opts.via}`;
  if (opts.remoteAddress === null) return out;
  out['x-forwarded-for'] = opts.remoteAddress;
  out['x-forwarded-proto'] = opts.secure ? 'https' : 'http';
  const host = incoming['host'];
  if (host !== undefined) out['x-forwarded-host'] = host;
  return out;
}

/**
 * Upstream answer headers (undici's: lower-case names, string or string[] values) → headers for
 * the client, without hop-by-hop ones (and those named in the upstream's Connection header).
 * Arrays (set-cookie above all) stay arrays. A Set-Cookie of one of `ownCookies` stays behind:
 * browsers share cookies between the ports of a host, so a service could otherwise replace or
 * spoil the console's session.
 */
export function forwardResponseHeaders(upstream: Readonly<Record<string, string | string[] | undefined>>, ownCookies: ReadonlySet<string> = NOTHING): Record<string, string | string[]> {
  const out = headerRecord<string | string[]>();
  const connection = upstream['connection'];
  const listed = connection === undefined
    ? undefined
    : connectionNames(typeof connection === 'string' ? connection : connection.join(','));
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    if (listed !== undefined && listed.has(name) && !NEVER_CONNECTION_LISTED.has(name)) continue;
    if (name === 'set-cookie' && ownCookies.size > 0) {
      const kept = (typeof value === 'string' ? [value] : value).filter((c) => !ownCookies.has(cookieName(c)));
      if (kept.length > 0) out[name] = kept;
      continue;
    }
    out[name] = value;
  }
  return out;
}

/** The name a Set-Cookie value sets (RFC 6265 5.2: up to the first '=', trimmed). */
function cookieName(setCookie: string): string {
  const pair = setCookie.split(';', 1)[0]!;
  const eq = pair.indexOf('=');
  return (eq < 0 ? '' : pair.slice(0, eq)).trim();
}

/** Common Connection values name no extra header; only parse a real list. */
const PLAIN_CONNECTION = new Set(['keep-alive', 'close', 'Keep-Alive', 'Close', 'upgrade', 'Upgrade']);
const NOTHING: ReadonlySet<string> = new Set();

function connectionNames(value: string): ReadonlySet<string> {
  if (PLAIN_CONNECTION.has(value)) return NOTHING;
  const names = new Set<string>();
  for (const part of value.split(',')) {
    const name = part.trim().toLowerCase();
    if (name !== '') names.add(name);
  }
  return names;
}

/** Drops the named cookies; '' when none is left. Untouched (no split) when no name can be there. */
function withoutCookies(header: string, own: ReadonlySet<string>): string {
  let present = false;
  for (const name of own) if (header.includes(name)) { present = true; break; }
  if (!present) return header;
  let kept = '';
  for (const pair of header.split(';')) {
    const trimmed = pair.trim();
    if (trimmed === '') continue;
    const eq = trimmed.indexOf('=');
    // A pair without '=' is a nameless cookie for browsers; it is never one of ours.
    if (eq >= 0 && own.has(trimmed.slice(0, eq).trim())) continue;
    kept = kept === '' ? trimmed : `${kept}; ${trimmed}`;
  }
  return kept;
}
