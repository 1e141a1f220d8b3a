/**
 * Headers only the gateway writes. The data plane drops a caller's copies of them before a call
 * goes upstream, and a schedule may not set them: both read these lists, so a name added here
 * is stripped and refused alike. Names are lower-case.
 */

/** The gateway's own session cookies (console, application): never sent on to a service. */
export const CONSOLE_COOKIE = 'mk_session';
export const APP_COOKIE = 'mk_app';
export const GATEWAY_COOKIES: ReadonlySet<string> = new Set([CONSOLE_COOKIE, APP_COOKIE]);

/** The names of a Cookie header's pairs (a pair without `=` names nothing). */
export function cookieNames(header: string): string[] {
  const names: string[] = [];
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq >= 0) names.push(pair.slice(0, eq).trim());
  }
  return names;
}

/** Describe one connection and never travel past the gateway (RFC 9110 7.6.1). */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'proxy-authenticate', 'proxy-authorization',
]);

/** The signed identity (JWT) the gateway forwards when the route asks for one. */
export const SIGNED_IDENTITY = 'x-gateway-identity';

/** The identity the gateway forwards to a protected upstream, as the route declares it. */
export const IDENTITY_HEADERS: ReadonlySet<string> = new Set([
  'x-gateway-user', 'x-gateway-roles', 'x-gateway-organisation', 'remote-user', SIGNED_IDENTITY,
]);

/** Headers that carry a credential toward a service: never kept in memory past the request they go with. */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie', SIGNED_IDENTITY]);

/** Other spellings of the identity headers, which the gateway never writes but a service may read. */
export const IDENTITY_LOOKALIKES: ReadonlySet<string> = new Set(['x-gateway-organization']);

/**
 * The proxy chain. No client is a trusted proxy until a proxy mode exists, so only the gateway's
 * own x-forwarded-* reach the upstream. The whole `x-forwarded-` family counts: frameworks build
 * redirect URLs and client addresses from any of them.
 */
export const FORWARDING_HEADERS: ReadonlySet<string> = new Set([
  'forwarded', 'x-forwarded', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-prefix', 'x-real-ip',
  'true-client-ip', 'x-client-ip', 'x-cluster-client-ip', 'client-ip', 'cf-connecting-ip', 'fastly-client-ip',
  'x-original-forwarded-for', 'x-host', 'x-original-host',
]);
export const FORWARDING_PREFIX = 'x-forwarded-';

/** What each scheduled call carries, written by the gateway (spec 1.1 rule 10). */
export const JOB_HEADERS: ReadonlySet<string> = new Set(['gateway-job', 'gateway-job-run', 'gateway-job-attempt']);

/**
 * Headers some services serve in place of the request's own path or method (IIS URL Rewrite,
 * frameworks that trust them behind a proxy, method-override middleware): from a caller, they
 * would reach a path or a method the gateway's rules never judged.
 */
export const OVERRIDE_HEADERS: ReadonlySet<string> = new Set([
  'x-original-url', 'x-original-uri', 'x-rewrite-url', 'x-http-method-override', 'x-method-override', 'x-http-method',
]);

/**
 * Dropped from every incoming request before it goes upstream. `host`: undici sets the
 * upstream's. `expect`: undici refuses it.
 */
export const REQUEST_DROP: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP, ...IDENTITY_HEADERS, ...IDENTITY_LOOKALIKES, ...FORWARDING_HEADERS, ...OVERRIDE_HEADERS, ...JOB_HEADERS, 'host', 'expect',
]);

/**
 * Whether a caller's header (lower-case name) stays at the gateway: one of REQUEST_DROP, any of
 * the x-forwarded- family, or a name that is one of those once its underscores are dashes (PHP,
 * WSGI and Rack read `X_Gateway_User` and `X-Gateway-User` as one variable).
 */
export function droppedFromRequest(lower: string): boolean {
  if (REQUEST_DROP.has(lower) || lower.startsWith(FORWARDING_PREFIX)) return true;
  return lower.includes('_') && droppedFromRequest(lower.replaceAll('_', '-'));
}


/**
 * How the gateway frames a body it sends: the length is the body's own, and a call never waits
 * for a `100 Continue`.
 */
export const FRAMING_HEADERS: ReadonlySet<string> = new Set(['content-length', 'expect']);

export type GatewayHeaderKind = 'authorization' | 'host' | 'job' | 'identity' | 'forwarding' | 'override' | 'hop-by-hop' | 'framing';

/** Why a header (lower-case name) is the gateway's to write on a call, or undefined when it is not. */
export function gatewayHeaderKind(lower: string): GatewayHeaderKind | undefined {
  // Spelt with underscores, a name is the same variable to CGI-style servers.
  if (lower.includes('_')) return gatewayHeaderKind(lower.replaceAll('_', '-'));
  if (lower === 'authorization') return 'authorization';
  if (lower === 'host') return 'host';
  if (JOB_HEADERS.has(lower)) return 'job';
  if (IDENTITY_HEADERS.has(lower) || IDENTITY_LOOKALIKES.has(lower)) return 'identity';
  if (FORWARDING_HEADERS.has(lower) || lower.startsWith(FORWARDING_PREFIX)) return 'forwarding';
  if (OVERRIDE_HEADERS.has(lower)) return 'override';
  if (HOP_BY_HOP.has(lower)) return 'hop-by-hop';
  if (FRAMING_HEADERS.has(lower)) return 'framing';
  return undefined;
}
