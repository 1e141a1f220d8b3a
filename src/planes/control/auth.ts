import { GatewayError } from '../../http/errors.ts';
import type { Exchange } from '../../http/exchange.ts';
import { checkOrigin } from '../shared/origin.ts';
import type { RouteDoc } from '../../http/router.ts';
import type { GatewayContext } from '../context.ts';
import { bearerOf, sessionPrincipal, tokenPrincipal, type Principal } from '../principal.ts';
import type { RequestRecord } from '../../pipeline/request-record.ts';
import { notePrincipal } from '../recorded.ts';

/**
 * Control plane: a bearer token (admin kind) or the console session cookie. A known token of the
 * wrong kind is named on the request's record before the refusal, so its access line says whose.
 */
export function authenticateControl(gw: GatewayContext, ex: Exchange, doc: RouteDoc, record?: RequestRecord): Principal {
  const bearer = bearerOf(ex);
  let principal: Principal;
  if (bearer !== undefined) {
    principal = tokenPrincipal(gw, bearer);
    if (principal.kind === 'token' && principal.token.kind === 'personal') {
      notePrincipal(record, principal);
      throw new GatewayError('token-kind', 'A personal token carries an identity to the data plane; the control plane needs an admin token or a console session.');
    }
  } else {
    principal = sessionPrincipal(gw, ex);
    if (principal.kind === 'session') checkOrigin(gw, ex);
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
  throw new GatewayError('capability', capability === 'root' ? 'This action is root\'s alone.' : `This action needs the ${capability} capability (or root).`);
}
