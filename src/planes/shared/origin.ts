import { GatewayError } from '../../http/errors.ts';
import type { Exchange } from '../../http/exchange.ts';
import type { GatewayContext } from '../context.ts';
import { clientOfPlane } from '../forwarded.ts';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether the browser reached the gateway over HTTPS: the door's own TLS, or a proxy in front
 * that terminates it (proxy mode, spec 1.2 rules 13-18), when the door's settings believe it.
 */
export function browserSecure(gw: GatewayContext, ex: Exchange): boolean {
  return ex.secure || clientOfPlane(gw.certs.view, ex).secure;
}

/** The origin the browser used to reach this door. */
export function ownOrigin(gw: GatewayContext, ex: Exchange): string | undefined {
  const host = ex.headers.host;
  return host ? `${browserSecure(gw, ex) ? 'https' : 'http'}://${host}` : undefined;
}

/**
 * Cookie-borne requests that change something must carry the door's own Origin: with SameSite
 * this closes cross-site request forgery even for old browsers.
 */
export function checkOrigin(gw: GatewayContext, ex: Exchange): void {
  if (SAFE.has(ex.method)) return;
  const origin = ex.headers.origin;
  const own = ownOrigin(gw, ex);
  if (!origin || origin !== own) {
    throw new GatewayError('origin-mismatch', origin
      ? `A request that changes something with a session cookie must come from ${own ?? 'this address'}, not ${origin}.`
      : 'A request that changes something with a session cookie must carry an Origin header (browsers send it; scripts should use a token).');
  }
}
