/**
 * HTTP-01 (RFC 8555 section 8.3): the plain doors of the console and the application answer
 * `GET /.well-known/acme-challenge/{token}` from the answers the certificate actor's issuer has
 * posted, before any routing, redirect or console rule: an authority validating an order must
 * reach the answer whatever the plane's settings send elsewhere.
 */
import type { Exchange } from '../http/exchange.ts';
import { GatewayError } from '../http/errors.ts';
import { sendProblem } from '../http/respond.ts';
import { HTTP01_PREFIX, http01Token } from '../core/tls/acme-challenges.ts';
import type { GatewayContext } from './context.ts';

/** True when the exchange was an HTTP-01 validation, now answered (200 with the key authorization, or 404). */
export function answerAcmeChallenge(gw: GatewayContext, ex: Exchange): boolean {
  if (ex.secure || (ex.method !== 'GET' && ex.method !== 'HEAD') || !ex.path.startsWith(HTTP01_PREFIX)) return false;
  const token = http01Token(ex.path);
  const answer = token === undefined ? undefined : gw.certs.challenges.http01(token);
  if (answer === undefined) {
    sendProblem(ex, new GatewayError('not-found', 'No ACME validation of this gateway waits on this token.'));
  } else {
    ex.send(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }, answer);
  }
  return true;
}
