/**
 * The pipeline's core, one for every request the gateway sends on: a data-plane request and a
 * scheduled call alike. It canonicalises the path, matches the route, finds who is calling (a
 * credential the caller presented, or the scheduler's identity posed by the gateway), applies the
 * route's rules through the role hierarchy, and writes the headers the upstream receives. What
 * differs is only the ending: the data plane relays the answer to its client (`relay` in
 * upstream.ts), a scheduled call collects at most 64 KiB of it (`collect` in collect.ts).
 */
import { SCHEDULER_USER } from '../core/accounts/account-input.ts';
import type { ConfigView } from '../actors/config/client.ts';
import { GatewayError } from '../http/errors.ts';
import type { Identity, RouteView } from '../core/model.ts';
import { authenticate, authorise, queryCarriesLiveToken } from './admit.ts';
import { canonicalPath } from './canonical-path.ts';
import { slashesDecoded } from '../http/canonical-path.ts';
import { isHostValue, isRequestTarget } from '../http/grammar.ts';
import { forwardRequestHeaders } from './forward-headers.ts';
import { addIdentityHeaders } from './identity.ts';
import { normaliseHost } from './route-table.ts';
import type { RequestRecord } from './request-record.ts';
import type { UpstreamCall, UpstreamPools } from './upstream.ts';

/** The fixed identity scheduled calls act under (not an account). */

/** A credential the caller presented on the data plane: a personal token or an application session. */
export interface PresentedCredential {
  readonly kind: 'presented';
  readonly authorization: string | undefined;
  readonly appCookie: string | undefined;
}

/**
 * The scheduler's identity, posed inside the gateway: it never travels on a wire. The writing
 * token bounds it at every call (spec 1.1 rule 4, 5 rule 2): a revoked token calls nothing, and
 * roles or routes taken out of its perimeter refuse the call.
 */
export interface PosedIdentity {
  readonly kind: 'posed';
  /** The route the schedule names: the path must be served by it, whatever else matches. */
  readonly routeId: string;
  readonly roles: readonly string[];
  readonly organisation: string | null;
  /** The token that wrote the schedule; null for rows written before tokens bounded them. */
  readonly tokenId: string | null;
}

export interface PassRequest {
  readonly method: string;
  /** The Host asked (data plane), or the name the call is made under (scheduled calls). */
  readonly host: string | undefined;
  /** Path as asked, without the query. */
  readonly path: string;
  /** Query without the `?`; '' when none. */
  readonly query: string;
  /** Lower-case names: what the caller sent, or the schedule's configured headers. */
  readonly headers: Readonly<Record<string, string>>;
  /** The client's connection; null for a call the gateway makes itself (no X-Forwarded-For). */
  readonly client: { readonly address: string; readonly secure: boolean } | null;
  readonly who: PresentedCredential | PosedIdentity;
  /** Cookies of the gateway's own sessions, removed before the upstream. */
  readonly ownCookies: ReadonlySet<string>;
  /** Overrides the route's timeout (a schedule has its own). */
  readonly timeoutMs?: number;
  /** The issuer of signed identities once the application's public names are declared (spec 1.2 rule 13). */
  readonly issuer?: string;
  /** The caller spoke HTTP/1.0: the gateway's Via entry says so. */
  readonly http10?: boolean;
}

/** What the core decided: the route, who passes, and the upstream call ready to send. */
export interface Pass {
  readonly route: RouteView;
  readonly identity: Identity | null;
  readonly upstream: UpstreamCall;
}

/**
 * The issuer of a signed identity. Once the application's public names are declared (spec 1.2
 * rule 13) it is `https://<first name>` on every node (`PassRequest.issuer`); until then it is
 * the name the request was made under: a caller choosing another Host only gets a
 * token its service will not accept.
 */
export function issuerOf(host: string | undefined): string {
  const name = normaliseHost(host ?? 'localhost');
  return name.includes(':') ? `https://[${name}]` : `https://${name}`;
}

function posedIdentity(view: ConfigView, who: PosedIdentity, route: RouteView): Identity {
  if (who.tokenId !== null) {
    const token = view.tokensById.get(who.tokenId);
    if (!token) {
      throw new GatewayError('token.revoked');
    }
    const routes = token.routes ?? [];
    if (!routes.includes('*') && !routes.includes(route.id)) {
      throw new GatewayError('perimeter', `The token "${token.name}" that wrote this schedule may no longer reach the route "${route.id}".`);
    }
    const allowed = new Set(view.roles.expand(token.roles ?? []));
    // Named as the schedule asked for them: the roles they imply are the catalogue's business, and
    // the run record (read by the token's holder) would otherwise list the hierarchy below them.
    const outside = who.roles.filter((asked) => view.roles.expand([asked]).some((r) => !allowed.has(r)));
    if (outside.length > 0) {
      throw new GatewayError('perimeter', `The token "${token.name}" that wrote this schedule may no longer ask for ${outside.map((r) => `"${r}"`).join(', ')}.`);
    }
    const organisations = token.organisations ?? [];
    if (who.organisation !== null && !organisations.includes('*') && !organisations.includes(who.organisation)) {
      throw new GatewayError('perimeter', `The token "${token.name}" that wrote this schedule may not act for the organisation "${who.organisation}".`);
    }
  }
  // A deleted organisation's vault went with it: its schedules act for nobody rather than for an id a new one may take.
  if (who.organisation !== null && !view.organisations.has(who.organisation)) {
    throw new GatewayError('organisation.unknown', `The organisation "${who.organisation}" of this schedule no longer exists.`);
  }
  return { user: SCHEDULER_USER, roles: view.roles.expand(who.roles), organisation: who.organisation };
}

/**
 * Runs the core for one request; throws the refusal (a GatewayError) when it may not pass. The
 * request's record, when one is open, learns the route and the identity as soon as they are
 * known, so a refusal is recorded with what was found before it.
 */
export function pass(view: ConfigView, pools: UpstreamPools, req: PassRequest, now: number, record?: RequestRecord): Pass {
  const path = canonicalPath(req.path);
  // The call writes the query as it came: what it could not write is the caller's to fix, not a failed call.
  if (req.query !== '' && !isRequestTarget(req.query)) {
    throw new GatewayError('path.invalid', 'The query string holds a space, a control character or a character outside printable ASCII: percent-encode it.');
  }
  const who = req.who;
  if (who.kind === 'presented' && req.host !== undefined && !isHostValue(req.host)) {
    throw new GatewayError('request.invalid', 'The Host header is not a host name with an optional port (one Host line; no space, "/", "?", "#" or "@").');
  }
  // The caller's own Via is sent on; one naming this gateway came back through a route.
  const via = req.headers['via'];
  if (via !== undefined && via.includes(pools.hop)) {
    throw new GatewayError('route.loop', `This request already passed through this gateway (its Via header names ${pools.hop}): the route's upstream leads back to the gateway. Point the route at its service.`);
  }
  let match;
  if (who.kind === 'posed') {
    const named = view.routesById.get(who.routeId);
    if (!named) throw new GatewayError('route.unknown', `The route "${who.routeId}" no longer exists.`);
    match = view.routeTable.match(named.hosts[0], path);
    if (!match || match.route.id !== named.id) throw new GatewayError('route.unknown', `The route "${named.id}" no longer serves ${path}.`);
  } else {
    match = view.routeTable.match(req.host, path);
    if (!match) throw new GatewayError('route.unknown', `No route of this gateway matches ${req.method} ${path}.`);
    // A service that decodes %2F before splitting reads `/orders/adm%2Fusers` as
    // `/orders/adm/users`: when that reading is another route's path, the request is that
    // route's business as much as this one's, so it is refused rather than judged by one.
    const decoded = slashesDecoded(path);
    const other = decoded === undefined ? undefined : view.routeTable.match(req.host, decoded);
    if (other !== undefined && other !== null && other.route !== match.route) {
      throw new GatewayError('path.invalid', 'An escaped slash (%2F) in this path makes it another route\'s path for a service that decodes it: send the path without it.');
    }
  }
  const { route } = match;
  if (record) {
    record.route = route;
    record.servicePath = match.servicePath;
  }
  let identity: Identity | null;
  let dropAuthorization: boolean;
  if (who.kind === 'posed') {
    identity = posedIdentity(view, who, route);
    dropAuthorization = true;
  } else {
    // Query strings end up in logs and links: a live token there is refused, never passed on.
    if (req.query !== '' && queryCarriesLiveToken(view, req.query)) {
      throw new GatewayError('unauthenticated', 'A gateway token travels in the Authorization header (Bearer), never in the query string.');
    }
    ({ identity, dropAuthorization } = authenticate(view, who.authorization, who.appCookie, now, record));
  }
  if (record) record.identity = identity;
  authorise(view, route, identity, req.method, match.servicePath, now);

  const headers = forwardRequestHeaders(req.headers, {
    remoteAddress: req.client?.address ?? null, secure: req.client?.secure ?? false, ownCookies: req.ownCookies, dropAuthorization, via: req.http10 === true ? pools.via10 : pools.via,
  });
  if (identity) {
    const signer = view.signer;
    if (route.identity === 'jwt' && !signer) {
      throw new GatewayError('identity.unavailable', 'This route forwards a signed identity, and this node cannot unseal the signing key (its vault master key differs).');
    }
    addIdentityHeaders(headers, route.identity, identity, signer!, req.issuer ?? issuerOf(req.host), route.id, now);
  }
  const origin = view.origins.get(route.id)!;
  return {
    route,
    identity,
    upstream: {
      pools,
      health: pools.health,
      origin,
      method: req.method,
      path: req.query ? `${match.upstreamPath}?${req.query}` : match.upstreamPath,
      headers,
      timeoutMs: req.timeoutMs ?? route.timeoutMs,
      ownCookies: req.ownCookies,
    },
  };
}
