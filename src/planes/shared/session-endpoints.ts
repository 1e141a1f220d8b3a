/**
 * Sign-in, who-am-I and sign-out, for the console (control plane, `/api/session`, cookie
 * mk_session, SameSite=Strict) and for applications (data plane, `/.meerkat/session`, cookie
 * mk_app, SameSite=Lax so a link into the application keeps the session). One throttle for both: a
 * name's failures count together whichever door they were made at, on whichever node.
 */
import { THROTTLE } from '../../core/sessions/throttle.ts';
import { GatewayError, invalidField } from '../../http/errors.ts';
import type { Router } from '../../http/router.ts';
import { DECOY_HASH } from '../../workers/tasks/password.ts';
import type { SessionScope } from '../../actors/config/messages.ts';
import type { GatewayContext } from '../context.ts';
import { clientAddress } from '../forwarded.ts';
import { callerOf, SESSION_COOKIES, traceIdOf, type Principal } from '../principal.ts';
import { parsePasswordChange } from '../../core/accounts/account-input.ts';
import type { RequestContext } from '../../http/router.ts';
import type { AccountView } from '../../actors/config/messages.ts';
import { clip, TYPED_NAME_MAX } from '../../core/audit/event.ts';
import { withinHours } from '../../pipeline/hours.ts';
import { browserSecure, ownOrigin } from './origin.ts';

export const SESSION_TTL_MS = 12 * 60 * 60_000;

const ACCOUNT = {
  type: 'object',
  required: ['id', 'name', 'capabilities', 'roles', 'organisation'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    capabilities: { type: 'array', items: { type: 'string' } },
    roles: { type: 'array', items: { type: 'string' } },
    organisation: { type: ['string', 'null'] },
  },
} as const;
const SESSION = {
  type: 'object',
  required: ['account', 'expiresAt'],
  properties: { account: ACCOUNT, expiresAt: { type: 'integer', description: 'epoch seconds' } },
} as const;

interface Flavour {
  readonly path: string;
  readonly scope: SessionScope;
  readonly sameSite: 'Strict' | 'Lax';
  readonly what: string;
}

const FLAVOURS: Readonly<Record<SessionScope, Flavour>> = {
  console: { path: '/api/session', scope: 'console', sameSite: 'Strict', what: 'the console' },
  app: { path: '/.meerkat/session', scope: 'app', sameSite: 'Lax', what: 'the applications behind the gateway' },
};

function accountBody(p: Principal) {
  if (p.kind === 'anonymous' || !p.account) return null;
  const a = p.account;
  return { id: a.id, name: a.name, capabilities: a.capabilities, roles: a.roles, organisation: a.organisation };
}

/**
 * One attempt at a name's password under the throttle, shared by both doors and every node (the
 * attempts are rows in the database): refused while the name is locked, or while as many attempts
 * are in flight as failures are left. The answer ends the attempt; it says whether this failure
 * locked the name.
 */
async function beginAttempt(gw: GatewayContext, name: string): Promise<(ok: boolean) => Promise<boolean>> {
  const begun = await gw.config.call('signin.begin', { name });
  if ('wait' in begun) {
    throw new GatewayError('signin.locked', undefined, undefined, { retryAfter: Math.max(1, Math.ceil(begun.wait / 1000)) });
  }
  return (ok) => gw.config.call('signin.end', { name, attempt: begun.attempt, ok });
}

export function addSessionEndpoints(router: Router<Principal>, gw: GatewayContext, scope: SessionScope): void {
  const { path, sameSite, what } = FLAVOURS[scope];
  const cookieName = SESSION_COOKIES[scope];
  const cookie = (value: string, maxAgeSeconds: number, secure: boolean) =>
    `${cookieName}=${value}; Path=/; HttpOnly; SameSite=${sameSite}; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
  /**
   * The account half of the trail (spec 1.3 rules 8-9, 6.1), written by the sign-in pages, never
   * through the control plane's changes: target kind `console` for the console, `account` for an
   * application. A name matching no account has no actor, and the typed name, clipped, is the target.
   */
  const signinLine = (ctx: RequestContext<Principal>, account: AccountView | null, typed: string, action: string, detail: string | null) => {
    gw.audit.record({
      at: gw.clock.now(), part: 'security', action,
      actorAccount: account?.name ?? null, actorToken: null,
      targetKind: scope === 'console' ? 'console' : 'account', targetId: account?.id ?? null, targetName: account?.name ?? clip(typed, TYPED_NAME_MAX),
      organisation: account?.organisation ?? null, changes: null, detail, address: clientAddress(gw.certs.view, ctx.ex), traceId: traceIdOf(ctx.ex), attributes: null,
    });
  };

  router.add('POST', path, {
    summary: `Sign in to ${what}`,
    description: `Sets an HttpOnly, SameSite=${sameSite} cookie ${cookieName} (Secure over HTTPS). A wrong password, an unknown name and a disabled account (and, for an application, a sign-in outside its organisation's hours) get the same answer; the audit trail records the real reason. Five failures within 15 minutes lock the name for 15 minutes.`,
    tags: ['session'], auth: 'none',
    body: {
      type: 'object', required: ['name', 'password'],
      properties: { name: { type: 'string', maxLength: 200 }, password: { type: 'string', maxLength: 1024 }, code: { type: 'string', description: 'second-factor code, when the account has one' } },
    },
    responses: {
      200: { description: 'signed in; the cookie is set', schema: SESSION },
      400: { description: 'a field is missing or not a string' },
      401: { description: 'name or password not right (signin.refused)' },
      403: { description: 'Origin header of another site' },
      429: { description: 'too many failed attempts for this name (signin.locked)' },
    },
  }, async (ctx) => {
    const body = await ctx.json();
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw invalidField('body', 'Send a JSON object {"name": …, "password": …}.');
    }
    const { name, password, code } = body as Record<string, unknown>;
    if (typeof name !== 'string' || name.trim() === '' || name.length > 200) throw invalidField('name', 'name must be a non-empty string of at most 200 characters.');
    if (typeof password !== 'string' || password === '' || password.length > 1024) throw invalidField('password', 'password must be a non-empty string of at most 1024 characters.');
    if (code !== undefined && typeof code !== 'string') throw invalidField('code', 'code must be a string.');
    // Sign-in from another site would let it plant its own session (login CSRF).
    const origin = ctx.ex.headers.origin;
    if (origin && origin !== ownOrigin(gw, ctx.ex)) {
      throw new GatewayError('origin-mismatch', `Sign-in must come from the origin it is sent to, not ${origin}.`);
    }

    // Refused while locked, or while as many attempts are in flight as failures are left, on any
    // node (the attempts are in the database): the trail has the attempt that tripped the lock, and
    // nothing after (rule 8).
    const ended = await beginAttempt(gw, name);
    const account = gw.config.view.accountsByName.get(name);
    let ok: boolean;
    try {
      // The same work for an unknown name, so timing does not tell which names exist.
      ok = await gw.pool.verifyPassword(password, account?.passwordHash ?? DECOY_HASH);
    } catch (err) {
      await ended(false);
      throw err;
    }
    // An application's door is shut outside the member's organisation hours, as its routes are.
    const organisation = account?.organisation ? gw.config.view.organisations.get(account.organisation) : undefined;
    const outsideHours = scope === 'app' && organisation !== undefined && !withinHours(organisation.hours, gw.clock.now());
    if (!account || !ok || account.disabled || outsideHours) {
      const tripped = await ended(false);
      // The visitor reads one sentence; the trail states the real reason.
      const reason = !account || !ok ? 'bad-credentials' : account.disabled ? 'disabled' : 'outside-hours';
      // The name typed, the reason and the address are the trail's, for root (spec 1.3 rule 10): the
      // operational log, which infra-admin reads, says only that a sign-in was refused.
      gw.log.info(tripped ? 'sign-in locked' : 'sign-in refused', { scope });
      signinLine(ctx, account ?? null, name, tripped ? 'signin.locked' : 'signin.refused', tripped ? 'throttled' : reason);
      if (tripped) throw new GatewayError('signin.locked', undefined, undefined, { retryAfter: THROTTLE.lockMs / 1000 });
      throw new GatewayError('signin.refused');
    }
    await ended(true);
    const session = await gw.config.call('session.create', { account: account.id, scope, ttlMs: SESSION_TTL_MS });
    signinLine(ctx, account, name, 'signin', 'password');
    if (account.organisation) signinLine(ctx, account, name, 'signin.organisation', gw.config.view.organisations.get(account.organisation)?.name ?? account.organisation);
    return {
      headers: { 'set-cookie': cookie(session.secret, SESSION_TTL_MS / 1000, browserSecure(gw, ctx.ex)) },
      body: {
        account: { id: account.id, name: account.name, capabilities: account.capabilities, roles: account.roles, organisation: account.organisation },
        expiresAt: Math.floor(session.expiresAt / 1000),
      },
    };
  });

  // The console also reads admin tokens, and a schedules token still calling it: a token may have
  // no account (null). An application's door opens for a session alone, which always has one.
  const whose = scope === 'console'
    ? { ...ACCOUNT, type: ['object', 'null'], description: 'null for a token that belongs to no account' }
    : ACCOUNT;
  router.add('GET', path, {
    summary: 'The signed-in account', tags: ['session'], auth: 'session',
    responses: { 200: { description: 'who is signed in', schema: { type: 'object', required: ['account', 'via'], properties: { account: whose, via: { type: 'string', enum: ['session', 'token'] } } } }, 401: { description: 'not signed in' } },
  }, (ctx) => ({ body: { account: accountBody(ctx.principal), via: ctx.principal.kind } }));

  router.add('PUT', `${path}/password`, {
    summary: 'Change the signed-in account\'s password', tags: ['session'], auth: 'session', sessionOnly: true,
    description: 'Needs the current password, checked under the sign-in throttle: a wrong one is a failed attempt for the account\'s name (signin.refused in the trail) and five lock it. The other sessions of the account end; this one stays. Written to the account\'s security in the audit trail (password.change), never as a change of the control plane.',
    body: { type: 'object', required: ['current', 'password'], additionalProperties: false, properties: { current: { type: 'string' }, password: { type: 'string', minLength: 12, maxLength: 1024 } } },
    responses: { 204: { description: 'changed' }, 400: { description: 'a field is not valid' }, 401: { description: 'not signed in, or the current password is not right (signin.refused)' }, 403: { description: 'Origin of another site, or a token (forbidden: only a session changes its password)' }, 429: { description: 'too many failed attempts for this account\'s name, at sign-in or here (signin.locked)' } },
  }, async (ctx) => {
    // A valid token is a credential of another kind: refused (403), not unknown (401).
    if (ctx.principal.kind !== 'session') throw new GatewayError('forbidden', 'Only a signed-in account changes its own password; a token cannot.');
    const { current, password } = parsePasswordChange(await ctx.json());
    const account = ctx.principal.account;
    // Under the sign-in throttle: a stolen session must not become a way to guess the password
    // without limit and without a trace.
    const ended = await beginAttempt(gw, account.name);
    let ok: boolean;
    try {
      ok = await gw.pool.verifyPassword(current, account.passwordHash);
    } catch (err) {
      await ended(false);
      throw err;
    }
    if (!ok) {
      const tripped = await ended(false);
      gw.log.info(tripped ? 'sign-in locked' : 'sign-in refused', { scope });
      signinLine(ctx, account, account.name, tripped ? 'signin.locked' : 'signin.refused', tripped ? 'throttled' : 'bad-credentials (password change)');
      if (tripped) throw new GatewayError('signin.locked', undefined, undefined, { retryAfter: THROTTLE.lockMs / 1000 });
      throw new GatewayError('signin.refused', 'The current password is not right.');
    }
    await ended(true);
    const passwordHash = await gw.pool.hashPassword(password);
    await gw.config.call('account.password', {
      id: account.id, passwordHash, keepSession: ctx.principal.sessionId, target: scope === 'console' ? 'console' : 'account',
    }, callerOf(gw, ctx.principal, ctx.ex));
    return { status: 204 };
  });

  router.add('DELETE', path, {
    summary: 'Sign out', tags: ['session'], auth: 'session', sessionOnly: true,
    responses: { 204: { description: 'signed out; the cookie is cleared' }, 401: { description: 'not signed in' }, 403: { description: 'Origin of another site, or a token (forbidden: a token is revoked, not signed out)' } },
  }, async (ctx) => {
    if (ctx.principal.kind !== 'session') throw new GatewayError('forbidden', 'Only a session can sign out; a token is revoked with DELETE /api/tokens/{id}.');
    await gw.config.call('session.delete', { id: ctx.principal.sessionId });
    signinLine(ctx, ctx.principal.account, ctx.principal.account.name, 'signout', null);
    return { status: 204, headers: { 'set-cookie': cookie('', 0, browserSecure(gw, ctx.ex)) } };
  });
}
