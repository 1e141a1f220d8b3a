/**
 * Who is calling, as a plane sees it (spec 1.2 rules 13-16 and the table after rule 15): the
 * peer of the connection and whether it came over HTTPS. A plane the gateway serves believes no
 * forwarded header. Behind a declared proxy, X-Forwarded-For and X-Forwarded-Proto are believed
 * from the proxy addresses only (empty: loopback and private ranges), and a request for one of the
 * plane's public names is HTTPS: the proxy presents those names.
 */
import type { DoorSettings } from '../core/tls/door-names.ts';
import type { Exchange } from '../http/exchange.ts';
import type { TlsView } from '../actors/certs/view.ts';
import type { DoorPlane } from '../actors/certs/messages.ts';
import type { ProxyTrust } from '../http/trusted-proxies.ts';
import { isIP } from 'node:net';

export interface Client {
  readonly address: string;
  readonly secure: boolean;
}

/** The host a request asked for, without port or trailing dot, lower-case; '' when none. */
export function requestHost(ex: Pick<Exchange, 'headers'>): string {
  const raw = (ex.headers.host ?? '').trim().toLowerCase();
  const host = raw.startsWith('[') ? raw.slice(0, raw.indexOf(']') + 1) : raw.replace(/:\d*$/, '');
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/** What the resolution reads of a request: its head is enough (a request record holds it). */
type Seen = Pick<Exchange, 'remoteAddress' | 'secure' | 'headers'>;

export function clientOf(view: TlsView, plane: DoorPlane, ex: Seen): Client {
  return clientUnder(view.settings.doors[plane], view.trust(plane), ex);
}

/** The client of a request as its own plane believes it (the internal plane believes no proxy). */
export function clientOfPlane(view: TlsView, ex: Seen & Pick<Exchange, 'plane'>): Client {
  if (ex.plane === 'internal') return { address: ex.remoteAddress, secure: ex.secure };
  return clientOf(view, ex.plane === 'data' ? 'app' : 'console', ex);
}

/** The client's address as its plane believes it, for the trail and the logs. */
export function clientAddress(view: TlsView, ex: Seen & Pick<Exchange, 'plane'>): string {
  return clientOfPlane(view, ex).address;
}

/** The client under given door settings (also those a change would bring: the session-safety rule). */
export function clientUnder(door: DoorSettings, trust: ProxyTrust | null, ex: Seen): Client {
  if (trust === null) return { address: ex.remoteAddress, secure: ex.secure };
  const believed = trust.believes(ex.remoteAddress);
  let address = ex.remoteAddress;
  const chain = believed ? ex.headers['x-forwarded-for'] : undefined;
  if (chain !== undefined) {
    // The client is the last hop the proxies did not add: walk back past the trusted ones.
    const hops = chain.split(',').map((h) => h.trim()).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) {
      // What is not an address is no hop: the client is then the last one a trusted proxy named.
      if (isIP(hops[i]!) === 0) break;
      address = hops[i]!;
      if (!trust.believes(address)) break;
    }
  }
  const proto = believed ? ex.headers['x-forwarded-proto']?.split(',')[0]?.trim().toLowerCase() : undefined;
  const secure = ex.secure || proto === 'https' || door.names.includes(requestHost(ex));
  return { address, secure };
}
