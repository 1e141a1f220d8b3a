/**
 * HTTP-01 (RFC 8555 section 8.3): the plain doors of the console and the application answer
 * `GET /.well-known/acme-challenge/{token}` from the answers the certificate actor's issuer has
 * posted, before any routing, redirect or console rule: an authority validating an order must
 * reach the answer whatever the plane's settings send elsewhere. A token this gateway does not
 * hold goes on as any request: a service behind a route may be answering its own validation.
 */
import type { Exchange } from '../http/exchange.ts';
import { HTTP01_PREFIX, http01Token } from '../core/tls/acme-challenges.ts';
import type { GatewayContext } from './context.ts';

/** True when the exchange was a validation of this gateway's, now answered (200 with the key authorization). */
export function answerAcmeChallenge(gw: GatewayContext, ex: Exchange): boolean {
  if (ex.secure || (ex.method !== 'GET' && ex.method !== 'HEAD') || !ex.path.startsWith(HTTP01_PREFIX)) return false;
  const token = http01Token(ex.path);
  const answer = token === undefined ? undefined : gw.certs.challenges.http01(token);
  if (answer === undefined) return false;
  ex.send(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }, answer);
  return true;
}
