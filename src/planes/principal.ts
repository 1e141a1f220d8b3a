import type { AccountView, SessionScope, TokenView } from '../actors/config/messages.ts';
import { APP_COOKIE, CONSOLE_COOKIE } from '../http/gateway-headers.ts';
import { GatewayError } from '../http/errors.ts';
import type { Exchange } from '../http/exchange.ts';
import { hashSecret } from '../core/secrets.ts';
import type { GatewayContext } from './context.ts';
import { clientAddress } from './forwarded.ts';
import type { Caller } from '../workers/protocol.ts';

/** Who is calling, as resolved from the snapshot (never from the database). */
export type Principal =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'session'; readonly sessionId: string; readonly account: AccountView }
  | { readonly kind: 'token'; readonly token: TokenView; readonly account: AccountView | null };

export const SESSION_COOKIE = CONSOLE_COOKIE;
/** Each plane's own session cookie: the console's never opens the data plane, nor the reverse. */
export const SESSION_COOKIES: Readonly<Record<SessionScope, string>> = { console: CONSOLE_COOKIE, app: APP_COOKIE };
const ANONYMOUS: Principal = { kind: 'anonymous' };

export function bearerOf(ex: Exchange): string | undefined {
  const auth = ex.headers.authorization;
  if (!auth) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
  if (!m) throw new GatewayError('unauthenticated', 'The Authorization header must be "Bearer <token>".');
  return m[1];
}

export function cookieOf(ex: Exchange, name: string): string | undefined {
  return cookiesOf(ex, name)[0];
}

/** Every value sent under `name`, in the browser's order (the longest path first). */
function cookiesOf(ex: Exchange, name: string): string[] {
  const header = ex.headers.cookie;
  const values: string[] = [];
  if (!header) return values;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/** Resolves a bearer token; an unknown or revoked one is refused, not treated as anonymous. */
export function tokenPrincipal(gw: GatewayContext, secret: string): Principal {
  const token = gw.config.view.tokensByHash.get(hashSecret(secret));
  if (!token) throw new GatewayError('unauthenticated', 'This token is not known to the gateway, or it was revoked.');
  const account = token.account ? gw.config.view.accountsById.get(token.account) ?? null : null;
  if (account?.disabled) throw new GatewayError('unauthenticated', 'The account of this token is disabled.');
  return { kind: 'token', token, account };
}

/** Resolves a plane's session cookie; an expired, unknown or other plane's one is anonymous. */
export function sessionPrincipal(gw: GatewayContext, ex: Exchange, scope: SessionScope = 'console'): Principal {
  // Another page of the same host (any port shares cookies) may have set a second cookie of this
  // name on a longer path, which the browser sends first: a value that opens no session is passed
  // over, so that it cannot lock the operator out.
  for (const secret of cookiesOf(ex, SESSION_COOKIES[scope])) {
    if (!secret) continue;
    const id = hashSecret(secret);
    const session = gw.config.view.sessions.get(id);
    if (!session || session.scope !== scope || session.expiresAt <= gw.clock.now()) continue;
    const account = gw.config.view.accountsById.get(session.account);
    if (!account || account.disabled) continue;
    return { kind: 'session', sessionId: id, account };
  }
  return ANONYMOUS;
}

export const ANONYMOUS_PRINCIPAL = ANONYMOUS;

/** Who did something, as records name them: `account:<name>`, `token:<name>`, or `anonymous`. */
export function principalLabel(p: Principal): string {
  if (p.kind === 'session') return `account:${p.account.name}`;
  if (p.kind === 'token') return `token:${p.token.name}`;
  return 'anonymous';
}

/**
 * The trace id of a W3C `traceparent` header, or null when absent or not valid (Trace Context
 * 3.2): version `ff` is never valid, version 00 has exactly four fields and a later version may
 * have more; neither the trace id nor the parent id may be all zeros.
 */
export function traceIdOf(ex: Pick<Exchange, 'headers'>): string | null {
  // Most requests carry none: no expression is run for them (the access log asks on every exchange).
  const header = ex.headers.traceparent;
  if (header === undefined) return null;
  const m = TRACEPARENT.exec(header.trim());
  if (m === null || m[1] === 'ff' || (m[1] === '00' && m[4] !== undefined)) return null;
  return ALL_ZEROS.test(m[2]!) || ALL_ZEROS.test(m[3]!) ? null : m[2]!;
}
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-.*)?$/;
const ALL_ZEROS = /^0+$/;

/** Who asked, as a write carries it to the actor that applies it (the audit stamp). */
export function callerOf(gw: GatewayContext, p: Principal, ex: Exchange): Caller {
  const account = p.kind === 'session' ? p.account : p.kind === 'token' ? p.account : null;
  return {
    account: account?.name ?? null,
    token: p.kind === 'token' ? p.token.name : null,
    address: clientAddress(gw.certs.view, ex),
    traceId: traceIdOf(ex),
    organisation: account?.organisation ?? null,
  };
}
