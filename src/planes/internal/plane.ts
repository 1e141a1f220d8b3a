import { GatewayError } from '../../http/errors.ts';
import type { Exchange, ExchangeHandler } from '../../http/exchange.ts';
import { addOpenApiDocument } from '../../http/openapi.ts';
import { serveApi } from '../../http/respond.ts';
import { notePrincipal, serveRecorded, type RecordedHandler } from '../recorded.ts';
import type { RequestRecord } from '../../pipeline/request-record.ts';
import { Router } from '../../http/router.ts';
import type { GatewayContext } from '../context.ts';
import { bearerOf, cookieOf, SESSION_COOKIES, tokenPrincipal, ANONYMOUS_PRINCIPAL, type Principal } from '../principal.ts';
import { addProbes } from '../probes.ts';
import { addSchedulesApi } from '../shared/schedules-api.ts';

/**
 * The internal plane answers tokens only (spec 5.1): a browser session is refused, and being on
 * loopback or inside the cluster grants nothing. Only `schedules` tokens open its API.
 */
export function authenticateInternal(gw: GatewayContext, ex: Exchange, auth: 'none' | 'session' | 'token', record?: RequestRecord): Principal {
  if (auth === 'none') return ANONYMOUS_PRINCIPAL;
  const bearer = bearerOf(ex);
  if (bearer === undefined) {
    if (Object.values(SESSION_COOKIES).some((name) => cookieOf(ex, name) !== undefined)) throw new GatewayError('tokens-only');
    throw new GatewayError('unauthenticated', 'The internal plane needs a schedules token: Authorization: Bearer <token>.');
  }
  const principal = tokenPrincipal(gw, bearer);
  if (principal.kind === 'token' && principal.token.kind !== 'schedules') {
    // Known, of the wrong kind: its access line names it.
    notePrincipal(record, principal);
    throw new GatewayError('token-kind', `${principal.token.kind === 'admin' ? 'An' : 'A'} ${principal.token.kind} token does not open the internal plane; it takes a schedules token.`);
  }
  return principal;
}

export function internalRouter(gw: GatewayContext): Router<Principal> {
  const router = new Router<Principal>();
  addProbes(router, gw);
  addSchedulesApi(router, gw, 'internal');
  addOpenApiDocument(router, '/api/openapi.json', 'This document: the internal plane\'s API', {
    title: 'Meerkat internal plane',
    version: gw.version,
    description: 'Scheduling API for backend services. Tokens only (kind schedules); browser sessions are refused.',
  });
  return router;
}

/** Internal plane (default :7070). */
export function internalPlane(gw: GatewayContext): ExchangeHandler {
  const router = internalRouter(gw);
  const serve: RecordedHandler = async (ex, record) => {
    const served = await serveApi(router, ex, (doc) => notePrincipal(record, authenticateInternal(gw, ex, doc.auth, record)));
    if (!served) {
      // Unknown API paths are still behind the token rule: say who may ask before saying "nothing".
      if (ex.path.startsWith('/api/')) authenticateInternal(gw, ex, 'token');
      throw new GatewayError('not-found', `Nothing is served at ${ex.path} on the internal plane.`);
    }
  };
  return (ex) => serveRecorded(gw, ex, serve);
}
