import { GatewayError } from '../../http/errors.ts';
import type { Exchange } from '../../http/exchange.ts';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The origin the browser used to reach this door. */
export function ownOrigin(ex: Exchange): string | undefined {
  const host = ex.headers.host;
  return host ? `${ex.secure ? 'https' : 'http'}://${host}` : undefined;
}

/**
 * Cookie-borne requests that change something must carry the door's own Origin: with SameSite
 * this closes cross-site request forgery even for old browsers.
 */
export function checkOrigin(ex: Exchange): void {
  if (SAFE.has(ex.method)) return;
  const origin = ex.headers.origin;
  if (!origin || origin !== ownOrigin(ex)) {
    throw new GatewayError('origin-mismatch', origin
      ? `A request that changes something with a session cookie must come from ${ownOrigin(ex) ?? 'this address'}, not ${origin}.`
      : 'A request that changes something with a session cookie must carry an Origin header (browsers send it; scripts should use a token).');
  }
}
