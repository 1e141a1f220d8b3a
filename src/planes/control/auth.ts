import { GatewayError } from '../../http/errors.ts';
import type { Exchange } from '../../http/exchange.ts';
import type { RouteDoc } from '../../http/router.ts';
import type { GatewayContext } from '../context.ts';
import { bearerOf, sessionPrincipal, tokenPrincipal, type Principal } from '../principal.ts';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The console's own origin as the browser sees it. */
function ownOrigin(ex: Exchange): string | undefined {
  const host = ex.headers.host;
  return host ? `${ex.secure ? 'https' : 'http'}://${host}` : undefined;
}

/**
 * Cookie-borne requests that change something must carry the console's own Origin: with
 * SameSite=Strict this closes cross-site request forgery even for old browsers.
 */
export function checkOrigin(ex: Exchange): void {
  if (SAFE.has(ex.method)) return;
  const origin = ex.headers.origin;
  if (!origin || origin !== ownOrigin(ex)) {
    throw new GatewayError('origin-mismatch', origin
      ? `A console request that changes something must come from ${ownOrigin(ex) ?? 'the console'}, not ${origin}.`
      : 'A console request that changes something must carry an Origin header (browsers send it; scripts should use an admin token).');
  }
}

/** Control plane: a bearer token (admin kind) or the console session cookie. */
export function authenticateControl(gw: GatewayContext, ex: Exchange, doc: RouteDoc): Principal {
  const bearer = bearerOf(ex);
  let principal: Principal;
  if (bearer !== undefined) {
    principal = tokenPrincipal(gw, bearer);
    if (principal.kind === 'token' && principal.token.kind === 'personal') {
      throw new GatewayError('token-kind', 'A personal token carries an identity to the data plane; the control plane needs an admin token or a console session.');
    }
  } else {
    principal = sessionPrincipal(gw, ex);
    if (principal.kind === 'session') checkOrigin(ex);
  }
  if (doc.auth !== 'none' && principal.kind === 'anonymous') {
    throw new GatewayError('unauthenticated', 'Sign in to the console (POST /api/session) or send an admin token.');
  }
  return principal;
}

/** Capabilities of the caller; root holds every capability. */
export function requireCapability(principal: Principal, capability: string): void {
  const caps = principal.kind === 'anonymous' ? [] : principal.account?.capabilities ?? [];
  if (caps.includes('root') || caps.includes(capability)) return;
  throw new GatewayError('capability', `This action needs the ${capability} capability (or root).`);
}
