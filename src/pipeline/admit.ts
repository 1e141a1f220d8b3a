/**
 * Who may pass a route: authentication (personal token), the route's rule and endpoint rules
 * through the role hierarchy, the route's organisation and the member's organisation hours.
 * Reads only the snapshot. The scheduler's calls come through here too, with an identity posed
 * by the gateway instead of a credential.
 */
import type { ConfigView } from '../actors/config/client.ts';
import type { AccountView } from '../actors/config/messages.ts';
import { GatewayError } from '../http/errors.ts';
import type { Identity, RouteView } from '../core/model.ts';
import { hashSecret } from '../core/secrets.ts';
import { holdsAny } from './roles.ts';
import { withinHours } from './hours.ts';
import { slashesDecoded } from '../http/canonical-path.ts';
import type { RequestRecord } from './request-record.ts';

export interface Admission {
  /** null: nobody authenticated (an open route). */
  readonly identity: Identity | null;
  /** The caller's Authorization carried a gateway token: it never travels upstream. */
  readonly dropAuthorization: boolean;
}

const GATEWAY_TOKEN_PREFIX = 'mk_';

const NOBODY: Admission = { identity: null, dropAuthorization: false };

const NEEDS_CREDENTIAL = 'This route needs a personal token (Authorization: Bearer <token>) or a session (POST /.meerkat/session).';

/** A token as minted (core/tokens/mint.ts): the prefix and 32 random bytes in base64url. */
const TOKEN_IN_TEXT = /mk_[A-Za-z0-9_-]{43}/g;

/**
 * Whether `text` carries a live gateway token anywhere in it: beside other credentials (two
 * Authorization lines, which the plain doors join with ", "), or in the query string. Such a
 * value is refused rather than passed on, so a service never receives a token that opens the
 * gateway. Cheap when there is none: one substring search.
 */
export function carriesLiveToken(view: ConfigView, text: string): boolean {
  if (!text.includes(GATEWAY_TOKEN_PREFIX)) return false;
  for (const m of text.matchAll(TOKEN_IN_TEXT)) if (view.tokensByHash.has(hashSecret(m[0]))) return true;
  return false;
}

const ESCAPE = /%([0-9A-Fa-f]{2})/g;
const unescaped = (_: string, hex: string): string => String.fromCharCode(parseInt(hex, 16));

/**
 * `carriesLiveToken` for a query string, read as a service reads it too: percent-escapes
 * decoded (`mk%5F…` is `mk_…` to any decoder), twice at most (a service that decodes twice
 * reads `%255F` as `_`). A malformed escape is left as it is, as lenient decoders do.
 */
export function queryCarriesLiveToken(view: ConfigView, query: string): boolean {
  let text = query;
  for (let round = 0; ; round++) {
    if (carriesLiveToken(view, text)) return true;
    if (round === 2 || !text.includes('%')) return false;
    const next = text.replace(ESCAPE, unescaped);
    if (next === text) return false;
    text = next;
  }
}

/**
 * The hashes of secrets that named a known token, so that a client sending the same token on every
 * request pays SHA-256 once (a microsecond of the data plane's CPU a request, bench/RESULTS.md).
 * Only the hash is remembered, never the verdict: revocation, a disabled account and the rules
 * are read from the snapshot on every request as before. A secret that names no token is not
 * kept, so unknown secrets sent in bulk cannot push the known ones out; the map is emptied when
 * full rather than ordered, which bounds it at no cost per hit.
 */
const knownHashes = new Map<string, string>();
const KNOWN_HASHES_MAX = 10_000;

function tokenHash(view: ConfigView, secret: string): string {
  const known = knownHashes.get(secret);
  if (known !== undefined) return known;
  const hash = hashSecret(secret);
  if (view.tokensByHash.has(hash)) {
    if (knownHashes.size >= KNOWN_HASHES_MAX) knownHashes.clear();
    knownHashes.set(secret, hash);
  }
  return hash;
}

function identityOf(view: ConfigView, account: AccountView, token?: string): Identity {
  // One shape for every caller (token undefined for a session): the request path stays monomorphic.
  return { user: account.name, roles: view.roles.expand(account.roles), organisation: account.organisation, id: account.id, token };
}

/** The application session (cookie mk_app), when one is presented and alive. */
function appSession(view: ConfigView, appCookie: string | undefined, now: number): Admission {
  if (appCookie === undefined) return NOBODY;
  const session = view.sessions.get(hashSecret(appCookie));
  if (!session || session.scope !== 'app' || session.expiresAt <= now) return NOBODY;
  const account = view.accountsById.get(session.account);
  if (!account || account.disabled) return NOBODY;
  return { identity: identityOf(view, account), dropAuthorization: false };
}

/**
 * An Authorization value's scheme (lower-case; '' when there is none) and what follows it. Spaces
 * and tabs both separate them (RFC 9110 11.4 allows only spaces; a tab is read the same rather
 * than passed on as someone else's credential).
 */
function credentialsOf(authorization: string): { scheme: string; secret: string } {
  const value = authorization.trim();
  let gap = 0;
  while (gap < value.length && value.charCodeAt(gap) !== 32 && value.charCodeAt(gap) !== 9) gap++;
  if (gap === value.length) return { scheme: '', secret: value };
  return { scheme: value.slice(0, gap).toLowerCase(), secret: value.slice(gap + 1).trim() };
}

/**
 * Resolves the caller: a personal token, else an application session. A bad gateway token is
 * refused, never ignored; an expired session is nobody (the rules then decide).
 */
export function authenticate(view: ConfigView, authorization: string | undefined, appCookie: string | undefined, now: number, record?: RequestRecord): Admission {
  if (authorization === undefined) return appSession(view, appCookie, now);
  const { scheme, secret } = credentialsOf(authorization);
  // A credential of the service's own (another scheme, another token format) is its business...
  if (!secret.startsWith(GATEWAY_TOKEN_PREFIX)) {
    // ...unless a live gateway token rides beside it (`Basic …, Bearer mk_…`).
    if (carriesLiveToken(view, authorization)) {
      throw new GatewayError('unauthenticated', 'A gateway token is sent alone, as Authorization: Bearer <token>, never beside other credentials.');
    }
    return appSession(view, appCookie, now);
  }
  if (scheme !== 'bearer') {
    // ...unless it is one of the gateway's tokens in another form: forwarded, it would hand the service a live token.
    if (!view.tokensByHash.has(hashSecret(secret))) return appSession(view, appCookie, now);
    throw new GatewayError('unauthenticated', 'A gateway token is sent as Authorization: Bearer <token>.');
  }
  const token = view.tokensByHash.get(tokenHash(view, secret));
  if (!token) throw new GatewayError('unauthenticated', 'This token is not known to the gateway, or it was revoked.');
  if (token.kind !== 'personal' || !token.account) {
    // Known, of the wrong kind: the access line names it (and its account) beside the refusal.
    if (record !== undefined) {
      record.token = token.name;
      record.user = token.account ? view.accountsById.get(token.account)?.name ?? null : null;
    }
    throw new GatewayError('token-kind', `${token.kind === 'admin' ? 'An' : 'A'} ${token.kind} token does not open the data plane; applications send a personal token.`);
  }
  const account = view.accountsById.get(token.account);
  if (!account || account.disabled) throw new GatewayError('unauthenticated', 'The account of this token is disabled or deleted.');
  return { identity: identityOf(view, account, token.name), dropAuthorization: true };
}

/** Applies the route's rules to an identity (or to nobody); throws the refusal. */
export function authorise(view: ConfigView, route: RouteView, identity: Identity | null, method: string, servicePath: string, now: number): void {
  const rules = view.endpointRules.get(route.id);
  let endpoint = rules?.match(method, servicePath);
  // A service may decode %2F before it splits the path: the rule its other reading meets holds too.
  const decoded = rules === undefined ? undefined : slashesDecoded(servicePath);
  const other = decoded === undefined ? undefined : rules!.match(method, decoded);
  if (other !== undefined && other !== endpoint) {
    if (endpoint !== undefined) authoriseEndpoint(identity, endpoint);
    endpoint = other;
  }
  const needed = route.rule !== null || endpoint !== undefined || route.organisation !== null;
  if (needed && identity === null) throw new GatewayError('unauthenticated', NEEDS_CREDENTIAL);
  if (identity === null) return;
  if (route.rule !== null && !holdsAny(identity.roles, route.rule.roles)) {
    throw new GatewayError('forbidden', `This route needs one of the roles ${route.rule.roles.join(', ')}.`);
  }
  if (endpoint !== undefined) authoriseEndpoint(identity, endpoint);
  if (route.organisation !== null && identity.organisation !== route.organisation) {
    throw new GatewayError('forbidden', `This route serves the members of the organisation "${route.organisation}".`);
  }
  if (identity.organisation !== null) {
    const organisation = view.organisations.get(identity.organisation);
    if (organisation && !withinHours(organisation.hours, now)) {
      throw new GatewayError('outside-hours', `The hours of ${organisation.name} do not include this moment (${organisation.hours?.timezone}).`);
    }
  }
}

function authoriseEndpoint(identity: Identity | null, endpoint: { readonly method: string; readonly path: string; readonly roles: readonly string[] }): void {
  if (identity === null) throw new GatewayError('unauthenticated', NEEDS_CREDENTIAL);
  if (!holdsAny(identity.roles, endpoint.roles)) {
    throw new GatewayError('forbidden', `${endpoint.method === '*' ? 'Any method' : endpoint.method} ${endpoint.path} needs one of the roles ${endpoint.roles.join(', ')}.`);
  }
}
