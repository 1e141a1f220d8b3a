import { GATEWAY_COOKIES } from '../../http/gateway-headers.ts';
import { GatewayError } from '../../http/errors.ts';
import type { Exchange, ExchangeHandler } from '../../http/exchange.ts';
import { serveApi } from '../../http/respond.ts';
import { Router } from '../../http/router.ts';
import { addOpenApiDocument } from '../../http/openapi.ts';
import { pass } from '../../pipeline/pass.ts';
import { relay, relayTo, type UpstreamCall, type UpstreamPools } from '../../pipeline/upstream.ts';
import type { GatewayContext } from '../context.ts';
import { ANONYMOUS_PRINCIPAL, cookieOf, SESSION_COOKIES, sessionPrincipal, type Principal } from '../principal.ts';
import { addSessionEndpoints } from '../shared/session-endpoints.ts';
import { checkOrigin } from '../shared/origin.ts';
import { addProbes } from '../probes.ts';
import { notePrincipal, RELAYED, relayEnd, serveRecorded, type RecordedHandler } from '../recorded.ts';
import type { RequestRecord } from '../../pipeline/request-record.ts';
import { hstsValue, redirectTarget, withHsts } from './https-policy.ts';
import { clientOf } from '../forwarded.ts';
import { answerAcmeChallenge } from '../acme-challenge.ts';

const APP_COOKIE = SESSION_COOKIES.app;

export const JWKS_PATH = '/.well-known/jwks.json';
export const OPENAPI_PATH = '/.meerkat/openapi.json';

const JWKS_SCHEMA = {
  type: 'object',
  required: ['keys'],
  properties: {
    keys: {
      type: 'array',
      items: {
        type: 'object',
        required: ['kty', 'crv', 'x', 'y', 'kid', 'alg', 'use'],
        properties: {
          kty: { type: 'string', const: 'EC' }, crv: { type: 'string', const: 'P-256' }, x: { type: 'string' }, y: { type: 'string' },
          kid: { type: 'string', description: 'the JWT header\'s kid' }, alg: { type: 'string', const: 'ES256' }, use: { type: 'string', const: 'sig' },
        },
      },
    },
  },
} as const;

/** The gateway's own addresses on the data plane: the probes and the identity keys. */
function ownRouter(gw: GatewayContext): Router<Principal> {
  const own = new Router<Principal>();
  addProbes(own, gw);
  addSessionEndpoints(own, gw, 'app');
  own.add('GET', JWKS_PATH, {
    summary: 'Public keys that verify the X-Gateway-Identity JWT of routes with identity: jwt', tags: ['identity'], auth: 'none',
    description: 'The JWT claims iss, aud (the route id: a service checks it), sub, roles, org (when the caller has one), iat and exp (iat + 60 s).',
    responses: { 200: { description: 'JWK set (ES256): the public parts of the signing key', schema: JWKS_SCHEMA }, 503: { description: 'this node holds no signing key it can unseal' } },
  }, () => {
    const signer = gw.config.view.signer;
    if (!signer) throw new GatewayError('identity.unavailable', 'This node cannot unseal the identity signing key (its vault master key differs); no key is published.');
    return { body: signer.jwks(), headers: { 'cache-control': 'public, max-age=300' } };
  });
  // Not /api/openapi.json, which is an application's address here: the gateway's own addresses
  // on the data plane live under /.meerkat and /.well-known.
  addOpenApiDocument(own, OPENAPI_PATH, 'This document: the gateway\'s own addresses on the data plane', {
    title: 'Meerkat data plane (the gateway\'s own addresses)',
    version: gw.version,
    description: 'What the gateway itself answers on the data plane: the probes, the application session and the identity keys. Every other address is a route\'s service.',
    session: { cookie: APP_COOKIE, signIn: 'POST /.meerkat/session' },
  });
  return own;
}

/** The application session on the gateway's own data-plane addresses. */
function appPrincipal(gw: GatewayContext, ex: Exchange, auth: 'none' | 'session' | 'token'): Principal {
  if (auth === 'none') return ANONYMOUS_PRINCIPAL;
  const principal = sessionPrincipal(gw, ex, 'app');
  if (principal.kind === 'anonymous') throw new GatewayError('unauthenticated', 'No application session: sign in with POST /.meerkat/session.');
  checkOrigin(gw, ex);
  return principal;
}

/**
 * Data plane (default :8080): application traffic. The gateway's own addresses are answered
 * first; every other request goes through the pipeline: route match, authentication, rules,
 * identity, upstream call. Everything is read from the snapshot in memory. While an observer
 * listens (endpoint audit), each exchange has a request record, closed after its answer.
 */
export function dataPlane(gw: GatewayContext, pools: UpstreamPools): ExchangeHandler {
  const ownApi = ownRouter(gw);
  const ownPaths = new Set(ownApi.routes.map((r) => r.pattern));

  /** Through the pipeline to the route's service: refused at once (a throw), else relayed. */
  const passed = (ex: Exchange, record: RequestRecord | undefined): UpstreamCall => {
    const client = clientOf(gw.certs.view, 'app', ex);
    if (record !== undefined) record.client = client.address;
    const { upstream } = pass(gw.config.view, pools, {
      method: ex.method,
      host: ex.headers.host,
      path: ex.path,
      query: ex.query,
      headers: ex.headers,
      client,
      issuer: gw.certs.view.issuer,
      who: { kind: 'presented', authorization: ex.headers.authorization, appCookie: ex.headers.cookie && cookieOf(ex, APP_COOKIE) },
      ownCookies: GATEWAY_COOKIES,
      http10: ex.http10,
    // The request's own time (the door read the clock as it came): one read of it less a request.
    }, ex.receivedAt, record);
    if (record !== undefined) gw.records.passed(record);
    return upstream;
  };
  const ended = relayEnd(gw);

  /** One of the gateway's own addresses, or (another method on it) the pipeline. */
  const own = async (ex: Exchange, record: RequestRecord | undefined): Promise<void> => {
    if (await serveApi(ownApi, ex, (doc) => notePrincipal(record, appPrincipal(gw, ex, doc.auth)))) return;
    await relay(ex, passed(ex, record), record);
  };

  // No promise of its own: the common request goes from the door to the relay in one turn, and
  // the relay's end closes its record.
  const serve: RecordedHandler = (ex, record) => {
    if (answerAcmeChallenge(gw, ex)) return;
    if (!ex.secure) {
      const target = redirectTarget(gw, ex);
      if (target !== undefined) {
        ex.send(308, { location: target });
        return;
      }
    }
    if (ownPaths.has(ex.path)) return own(ex, record);
    relayTo(ex, passed(ex, record), record, ended);
    return RELAYED;
  };

  // Every answer of an HTTPS door carries the HSTS value, refusals included (spec 1.2 rule 12).
  const answerOn = (ex: Exchange): Exchange => {
    const hsts = ex.secure ? hstsValue(gw, ex) : undefined;
    return hsts === undefined ? ex : withHsts(ex, hsts);
  };
  return (ex) => serveRecorded(gw, ex, serve, answerOn);
}
