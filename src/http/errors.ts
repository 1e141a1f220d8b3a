/**
 * The one error table: every refusal the gateway gives, with its status and the sentence a person
 * reads. `detail` may be replaced per use with a more precise sentence; the code never changes.
 * docs/errors.md lists every code (a test fails when one is missing).
 */
interface ErrorDef {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
}

export const ERRORS = {
  'not-found': { status: 404, title: 'Not found', detail: 'Nothing is served at this address on this plane.' },
  'route.unknown': { status: 404, title: 'No route', detail: 'No route of this gateway matches this request.' },
  'method-not-allowed': { status: 405, title: 'Method not allowed', detail: 'This address does not accept this method.' },
  'console.not-built': { status: 503, title: 'Console not built', detail: 'The console\'s files are not built on this node: run npm run build, then start the gateway again.' },
  'upgrade-required': { status: 426, title: 'Upgrade required', detail: 'This address is a WebSocket: open it with an upgrade request.' },
  'websocket.handshake': { status: 400, title: 'Malformed WebSocket handshake', detail: 'The upgrade request is not a WebSocket opening handshake (RFC 6455): it needs Connection: Upgrade, a Sec-WebSocket-Key of 16 bytes in base64, and no body.' },
  'request.invalid': { status: 400, title: 'Request cannot be forwarded', detail: 'The request holds what HTTP/1.1 cannot carry to the service: a method that is not a token, or a header with a control character or a character outside Latin-1.' },
  'path.invalid': { status: 400, title: 'Invalid path', detail: 'The request path is not valid percent-encoded text, or holds what services read in more than one way: a "." or ".." segment, a backslash, a "#" or %00.' },
  'body.invalid-json': { status: 400, title: 'Invalid JSON', detail: 'The request body is not valid JSON.' },
  'schedule.headers-too-large': { status: 431, title: 'Headers too large', detail: 'With the vault values they name, the schedule\'s headers are larger than one call may carry; nothing was sent.' },
  'body.length-required': { status: 411, title: 'Length required', detail: 'This address reads a request body only with its length stated (Content-Length).' },
  'body.too-large': { status: 413, title: 'Body too large', detail: 'The request body is larger than this endpoint accepts.' },
  'body.media-type': { status: 415, title: 'Unsupported media type', detail: 'Send the body as application/json.' },
  'field.invalid': { status: 400, title: 'Invalid field', detail: 'A field of the request is not valid.' },
  'cursor.invalid': { status: 400, title: 'Invalid cursor', detail: 'The cursor is not one this list gave; follow the Link header, or start again without a cursor.' },
  'unauthenticated': { status: 401, title: 'Not signed in', detail: 'This address needs a valid token or console session.' },
  'signin.refused': { status: 401, title: 'Sign-in refused', detail: 'The name or the password is not right.' },
  'live.too-many': { status: 429, title: 'Too many live feeds', detail: 'These credentials hold as many live feeds open on this node as they may; close one first.' },
  'signin.locked': { status: 429, title: 'Too many attempts', detail: 'Too many failed sign-ins for this name; wait a few minutes and try again.' },
  'origin-mismatch': { status: 403, title: 'Origin refused', detail: 'A console request that changes something must come from the console\'s own origin.' },
  'capability': { status: 403, title: 'Not allowed', detail: 'Your account does not hold the capability this action needs.' },
  'tokens-only': { status: 403, title: 'Tokens only', detail: 'The internal plane answers API tokens only; a browser session is refused here.' },
  'token-kind': { status: 403, title: 'Wrong kind of token', detail: 'This kind of token does not open this plane.' },
  'wrong-plane': { status: 403, title: 'Wrong plane', detail: 'This action is not served on this plane.' },
  'licensed-edition': { status: 403, title: 'Licensed edition', detail: 'This feature belongs to the licensed edition.' },
  'audit.no-collector': { status: 409, title: 'No collector', detail: 'No OpenTelemetry collector is configured (GATEWAY_OTLP_ENDPOINT); the push cannot be switched on.' },
  'route.upstream-invalid': { status: 400, title: 'Invalid upstream', detail: 'The upstream must be an http:// or https:// URL.' },
  'route.path-invalid': { status: 400, title: 'Invalid path', detail: 'Each path of a route must be a prefix starting with "/".' },
  'audit.no-contract': { status: 409, title: 'No OpenAPI contract', detail: 'This route has no OpenAPI contract, so its operations cannot be audited; deposit the contract (openapi) first.' },
  'audit.operation-unknown': { status: 409, title: 'Unknown operation', detail: 'An audited operation is not in the route\'s OpenAPI contract.' },
  'route.identity-unknown': { status: 400, title: 'Unknown identity mode', detail: 'The identity mode must be headers, remote-user or jwt.' },
  'role.unknown': { status: 400, title: 'Unknown role', detail: 'A role named here is not in the roles catalogue.' },
  'role.cycle': { status: 400, title: 'Role cycle', detail: 'These implies would make a role imply itself.' },
  'role.in-use': { status: 409, title: 'Role in use', detail: 'This role is still named by routes, accounts, tokens or other roles.' },
  'organisation.unknown': { status: 400, title: 'Unknown organisation', detail: 'The organisation named here does not exist.' },
  'organisation.in-use': { status: 409, title: 'Organisation in use', detail: 'This organisation still has members, routes or schedules that act for it.' },
  'account.unknown': { status: 400, title: 'Unknown account', detail: 'The account named here does not exist.' },
  'account.name-taken': { status: 409, title: 'Name taken', detail: 'An account with this name exists already.' },
  'account.protected': { status: 409, title: 'Protected account', detail: 'The root account cannot be deleted, disabled or stripped of root.' },
  'tls.authority-name-taken': { status: 409, title: 'Name taken', detail: 'A trusted authority with this name exists already.' },
  'vault.unsealable': { status: 503, title: 'Cannot unseal', detail: 'A sealed value cannot be opened with this node\'s vault master key.' },
  'tls.key-mismatch': { status: 400, title: 'Key does not match', detail: 'The private key does not belong to the certificate.' },
  'tls.answer-mismatch': { status: 400, title: 'Answer does not match', detail: 'This certificate was not issued for the key of this signing request.' },
  'tls.answer-adopted': { status: 409, title: 'Answer adopted already', detail: 'This signing request has its answer already; make a new request to renew.' },
  'tls.file-unreadable': { status: 400, title: 'File unreadable', detail: 'The certificate or key file cannot be read by the gateway.' },
  'tls.not-servable': { status: 409, title: 'Nothing to serve', detail: 'This certificate has no issued material yet, so it cannot be placed.' },
  'tls.internal-name': { status: 400, title: 'Not an internal name', detail: 'The internal plane takes only a certificate carrying a name the services call it by.' },
  'tls.name-taken': { status: 409, title: 'Name answered already', detail: 'Another certificate on this plane answers one of these names; place with replace: true to take its place.' },
  'tls.bind-failed': { status: 409, title: 'Door cannot open', detail: 'The HTTPS door could not bind its address; nothing was changed.' },
  'tls.last-certificate': { status: 409, title: 'Last certificate', detail: 'This is the plane\'s last certificate serving HTTPS, and its plain HTTP port is off or, on the console, HTTPS was used in the last 30 seconds.' },
  'tls.nothing-to-present': { status: 409, title: 'Nothing to present', detail: 'No certificate serves HTTPS on this plane; place one first.' },
  'tls.http-in-use': { status: 409, title: 'HTTP in use', detail: 'The console was called through plain HTTP in the last 30 seconds.' },
  'tls.session-would-drop': { status: 409, title: 'Session would drop', detail: 'This change would make your own console session be seen as plain HTTP.' },
  'tls.https-in-use': { status: 409, title: 'HTTPS in use', detail: 'The console was called through HTTPS in the last 30 seconds; a door mode that leaves its certificates inactive waits.' },
  'tls.name-invalid': { status: 400, title: 'Invalid name', detail: 'A name is not one this setting accepts: a declared name is one host name (no scheme, port, path, IP address or wildcard); a certificate name is a host name, a one-label wildcard or an IP address.' },
  'tls.proxy-address-invalid': { status: 400, title: 'Invalid proxy address', detail: 'A proxy address is an IP address or a CIDR range.' },
  'forbidden': { status: 403, title: 'Forbidden', detail: 'Your roles do not open this address.' },
  'outside-hours': { status: 403, title: 'Outside hours', detail: 'Your organisation\'s hours do not include this moment.' },
  'identity.unavailable': { status: 503, title: 'Identity signing unavailable', detail: 'The gateway cannot sign the identity this route forwards right now.' },
  'upstream.unreachable': { status: 502, title: 'Bad gateway', detail: 'The service behind this route cannot be reached.' },
  'upstream.timeout': { status: 504, title: 'Gateway timeout', detail: 'The service behind this route did not answer in time.' },
  'route.loop': { status: 508, title: 'Loop detected', detail: 'This request already passed through this gateway: the route\'s upstream leads back to the gateway. Point the route at its service.' },
  'upstream.failed': { status: 502, title: 'Bad gateway', detail: 'The service behind this route broke off its answer.' },
  'upstream.untrusted': { status: 502, title: 'Untrusted certificate', detail: 'The certificate of the service behind this route is not signed by a trusted authority (add its authority under trusted authorities).' },
  'upstream.name-mismatch': { status: 502, title: 'Certificate name mismatch', detail: 'The certificate of the service behind this route does not carry the host name of the route\'s upstream.' },
  'schedule.method-get': { status: 400, title: 'Method GET', detail: 'A scheduled call is an action: GET is refused.' },
  'schedule.method-invalid': { status: 400, title: 'Invalid method', detail: 'The method must be POST, PUT, PATCH or DELETE.' },
  'schedule.header-forbidden': { status: 400, title: 'Forbidden header', detail: 'This header is written by the gateway, never by a schedule.' },
  'schedule.header-invalid': { status: 400, title: 'Invalid header', detail: 'A header of the schedule is not a valid name and value.' },
  'schedule.headers-too-many': { status: 400, title: 'Too many headers', detail: 'A schedule may set at most 10 headers.' },
  'schedule.metadata-too-many': { status: 400, title: 'Too many metadata keys', detail: 'A schedule may carry at most 20 metadata keys.' },
  'schedule.metadata-invalid': { status: 400, title: 'Invalid metadata', detail: 'Metadata is an object of keys to text values.' },
  'schedule.cadence-count': { status: 400, title: 'One cadence', detail: 'A schedule needs exactly one of every, cron or at.' },
  'schedule.every-invalid': { status: 400, title: 'Invalid every', detail: 'The every cadence is not an ISO 8601 duration.' },
  'schedule.every-too-short': { status: 400, title: 'Cadence too short', detail: 'The every cadence must be at least one minute.' },
  'schedule.cron-invalid': { status: 400, title: 'Invalid cron', detail: 'The cron expression is not one the gateway accepts.' },
  'schedule.at-invalid': { status: 400, title: 'Invalid moment', detail: 'The at moment is not an RFC 3339 timestamp.' },
  'schedule.at-offset-missing': { status: 400, title: 'Moment without offset', detail: 'The at moment has no offset, so it is ambiguous.' },
  'schedule.timezone-unknown': { status: 400, title: 'Unknown time zone', detail: 'The time zone is not a known IANA zone; there is no fallback to UTC.' },
  'schedule.timeout-invalid': { status: 400, title: 'Invalid timeout', detail: 'The timeout is not a positive ISO 8601 duration.' },
  'schedule.timeout-too-long': { status: 400, title: 'Timeout too long', detail: 'The timeout may be at most two minutes.' },
  'schedule.duration-invalid': { status: 400, title: 'Invalid duration', detail: 'The duration is not an ISO 8601 duration.' },
  'schedule.overlap-invalid': { status: 400, title: 'Invalid overlap', detail: 'The overlap accepts skip only.' },
  'schedule.catchup-invalid': { status: 400, title: 'Invalid catchUp', detail: 'The catchUp is a whole number of seconds.' },
  'schedule.path-invalid': { status: 400, title: 'Invalid path', detail: 'The path must start with a slash, hold no "." or ".." segment, backslash or %00, and stay on the route.' },
  'schedule.roles-invalid': { status: 400, title: 'Invalid roles', detail: 'The roles are a list of role names, or one role.' },
  'schedule.route-unknown': { status: 404, title: 'Unknown route', detail: 'No route has this id.' },
  'token.revoked': { status: 403, title: 'Token revoked', detail: 'The token that wrote this schedule was revoked: the schedule is stopped and kept; nothing was sent.' },
  'schedule.stopped': { status: 409, title: 'Schedule stopped', detail: 'This schedule is stopped because the token that wrote it was revoked; it can be read and deleted.' },
  'schedule.too-many': { status: 409, title: 'Too many schedules', detail: 'This token holds as many schedules as one token may; delete one first, or ask root to raise the limit.' },
  'perimeter': { status: 403, title: 'Outside the perimeter', detail: 'This token\'s perimeter does not include what is asked.' },
  'filter.regex-invalid': { status: 400, title: 'Invalid expression', detail: 'The filter expression is not a regular expression that compiles.' },
  'filter.invalid': { status: 400, title: 'Invalid filter', detail: 'A filter of the list is not understood.' },
  'in-flight': { status: 409, title: 'Run in flight', detail: 'A run of this schedule is in flight; try again when it has finished.' },
  'tls.certificate-invalid': { status: 400, title: 'Invalid certificate', detail: 'The certificate cannot be read: send it as PEM text holding a BEGIN CERTIFICATE block.' },
  'tls.chain-invalid': { status: 400, title: 'Certificate outside the chain', detail: 'A certificate of the bundle certifies none of the chain that starts at the leaf.' },
  'tls.key-invalid': { status: 400, title: 'Invalid private key', detail: 'The private key cannot be read: send it as unencrypted PEM text.' },
  'tls.key-in-authority': { status: 400, title: 'Private key in an authority', detail: 'This PEM holds a private key; a trusted authority is a public certificate only: remove the key and send the certificates.' },
  'acme.terms-not-accepted': { status: 409, title: 'Terms not accepted', detail: 'The ACME authority\'s terms of service have not been accepted; nothing was sent to it.' },
  'acme.refused': { status: 502, title: 'Refused by the ACME authority', detail: 'The ACME authority refused the request.' },
  'acme.unreachable': { status: 502, title: 'ACME authority unreachable', detail: 'The ACME authority cannot be reached.' },
  'acme.authority-unknown': { status: 400, title: 'Unknown ACME authority', detail: 'No ACME authority has this id or name.' },
  'acme.authority-taken': { status: 409, title: 'Name taken', detail: 'An ACME authority with this name exists already.' },
  'acme.authority-in-use': { status: 409, title: 'Authority in use', detail: 'Orders still ask this ACME authority; delete them first.' },
  'logs.no-collector': { status: 409, title: 'No collector', detail: 'The logs cannot be pushed: no collector is configured (GATEWAY_OTLP_ENDPOINT).' },
  'actor.unavailable': { status: 503, title: 'Temporarily unavailable', detail: 'A part of the gateway is restarting; try again in a moment.' },
  'store.unavailable': { status: 503, title: 'Database unavailable', detail: 'The database cannot take this request now (it does not answer, is full or is held by another writer); try again in a moment.' },
  'not-ready': { status: 503, title: 'Not ready', detail: 'The gateway is not ready to serve.' },
  'draining': { status: 503, title: 'Stopping', detail: 'This gateway is stopping; send the request to another node.' },
  'internal': { status: 500, title: 'Internal error', detail: 'The gateway failed to answer this request; its operational log has the details.' },
} as const satisfies Record<string, ErrorDef>;

export type ErrorCode = keyof typeof ERRORS;

/** A refusal to answer as problem+json. Throw it from a handler, or build one and send it. */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly status: number;
  readonly detail: string;

  constructor(
    readonly code: ErrorCode,
    detail?: string,
    readonly field?: string,
    /** Extra members of the problem document (for example `retryAfter`). */
    readonly extra?: Readonly<Record<string, unknown>>,
  ) {
    super(detail ?? ERRORS[code].detail);
    this.status = ERRORS[code].status;
    this.detail = detail ?? ERRORS[code].detail;
  }
}

/** A 400 that names the field at fault. */
export function invalidField(field: string, sentence: string): GatewayError {
  return new GatewayError('field.invalid', sentence, field);
}

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: string;
  readonly field?: string;
  readonly [extra: string]: unknown;
}

/** RFC 9457 document for a refusal. */
export function problemOf(err: GatewayError): Problem {
  return {
    type: `urn:meerkat:problem:${err.code}`,
    title: ERRORS[err.code].title,
    status: err.status,
    detail: err.detail,
    code: err.code,
    ...(err.field !== undefined ? { field: err.field } : {}),
    ...err.extra,
  };
}
