import { GatewayError } from '../../http/errors.ts';
import type { Router } from '../../http/router.ts';
import { CAPABILITIES, parseAccountUpdate, parseNewAccount, type AccountInput } from '../../core/accounts/account-input.ts';
import type { AccountView } from '../../actors/config/messages.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { idParam, listOf, notFound, STRINGS, WRITE_REFUSALS } from './resource-docs.ts';

const CAPABILITY = 'app-admin';
const ACCOUNT = {
  type: 'object',
  required: ['id', 'name', 'roles', 'capabilities', 'organisation', 'disabled'],
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, roles: STRINGS,
    capabilities: { type: 'array', items: { type: 'string', enum: [...CAPABILITIES] } },
    organisation: { type: ['string', 'null'] }, disabled: { type: 'boolean' },
  },
} as const;

function accountBody(a: AccountView) {
  return { id: a.id, name: a.name, roles: a.roles, capabilities: a.capabilities, organisation: a.organisation, disabled: a.disabled };
}

/** Capabilities are the keys to the console: only root hands them out. */
function guardCapabilities(principal: Principal, input: AccountInput): void {
  if (input.capabilities === undefined || input.capabilities.length === 0) return;
  requireCapability(principal, 'root');
}

/**
 * An account that holds capabilities is changed or deleted by root alone: whoever could set its
 * password, or disable it, could sign in as it or lock it out, and so take keys that only root
 * hands out (root's own account above all).
 */
function guardHolder(principal: Principal, target: AccountView): boolean {
  const byRoot = principal.kind !== 'anonymous' && (principal.account?.capabilities ?? []).includes('root');
  if (target.capabilities.length > 0 && !byRoot) {
    throw new GatewayError('capability', 'Only root can change or delete an account that holds console capabilities.');
  }
  // Judged again on the row by the write (a grant made on another node may not be in this view yet).
  return byRoot;
}

export function addAccountsApi(router: Router<Principal>, gw: GatewayContext): void {
  const view = () => gw.config.view;
  const find = (id: string) => {
    const a = view().accountsById.get(id);
    if (!a) throw notFound('account', id);
    return a;
  };

  router.add('GET', '/api/accounts', {
    summary: 'List accounts', tags: ['accounts'], auth: 'session',
    responses: { 200: { description: 'every account, by name', schema: listOf('accounts', ACCOUNT) } },
  }, (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const accounts = [...view().accountsById.values()].sort((a, b) => a.name.localeCompare(b.name)).map(accountBody);
    return { body: { accounts } };
  });

  router.add('GET', '/api/accounts/{id}', {
    summary: 'One account', tags: ['accounts'], auth: 'session',
    responses: { 200: { description: 'the account', schema: ACCOUNT }, 404: { description: 'no such account' } },
  }, (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    return { body: accountBody(find(idParam(ctx.params, 'account'))) };
  });

  router.add('POST', '/api/accounts', {
    summary: 'Create an account', tags: ['accounts'], auth: 'session',
    description: 'Passwords are hashed with scrypt and never returned. Granting capabilities needs root.',
    body: { type: 'object', required: ['name', 'password'], additionalProperties: false, properties: { name: { type: 'string', maxLength: 200, pattern: '^[A-Za-z0-9][A-Za-z0-9._@+-]*$', description: 'scheduler (any case) is refused: the user of every scheduled call' }, password: { type: 'string', minLength: 12 }, roles: STRINGS, capabilities: STRINGS, organisation: { type: ['string', 'null'] }, disabled: { type: 'boolean' } } },
    responses: { 201: { description: 'created', schema: ACCOUNT }, 409: { description: 'the name is taken (account.name-taken)' }, ...WRITE_REFUSALS },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const input = parseNewAccount(await ctx.json());
    guardCapabilities(ctx.principal, input);
    const { password, ...rest } = input;
    const { id } = await gw.config.call('account.create', {
      name: rest.name, roles: rest.roles ?? [], capabilities: rest.capabilities ?? [],
      organisation: rest.organisation ?? null, disabled: rest.disabled ?? false,
      passwordHash: await gw.pool.hashPassword(password),
    }, callerOf(gw, ctx.principal, ctx.ex));
    return { status: 201, headers: { location: `/api/accounts/${id}` }, body: accountBody(find(id)) };
  });

  router.add('PATCH', '/api/accounts/{id}', {
    summary: 'Change an account', tags: ['accounts'], auth: 'session',
    description: 'Only the fields sent change. A new password or disabling ends the account\'s sessions. An account that holds capabilities is changed by root alone (403 `capability`).',
    body: { type: 'object', additionalProperties: false, properties: { password: { type: 'string', minLength: 12 }, roles: STRINGS, capabilities: STRINGS, organisation: { type: ['string', 'null'] }, disabled: { type: 'boolean' } } },
    responses: { 200: { description: 'changed', schema: ACCOUNT }, 404: { description: 'no such account' }, 409: { description: 'root cannot be disabled or lose root (account.protected)' }, ...WRITE_REFUSALS },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const id = idParam(ctx.params, 'account');
    const byRoot = guardHolder(ctx.principal, find(id));
    const input = parseAccountUpdate(await ctx.json());
    if (input.capabilities !== undefined) requireCapability(ctx.principal, 'root');
    const { password, ...change } = input;
    const ok = await gw.config.call('account.update', {
      id, change: { ...change, ...(password !== undefined ? { passwordHash: await gw.pool.hashPassword(password) } : {}) }, byRoot,
    }, callerOf(gw, ctx.principal, ctx.ex));
    if (!ok) throw notFound('account', id);
    return { body: accountBody(find(id)) };
  });

  router.add('DELETE', '/api/accounts/{id}', {
    summary: 'Delete an account', tags: ['accounts'], auth: 'session',
    description: 'Its sessions end and its tokens are revoked. An account that holds capabilities is deleted by root alone (403 `capability`).',
    responses: { 204: { description: 'deleted' }, 404: { description: 'no such account' }, 409: { description: 'root cannot be deleted (account.protected)' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const id = idParam(ctx.params, 'account');
    if (ctx.principal.kind !== 'anonymous' && ctx.principal.account?.id === id) {
      throw new GatewayError('account.protected', 'You cannot delete the account you are signed in with.');
    }
    const byRoot = guardHolder(ctx.principal, find(id));
    if (!(await gw.config.call('account.delete', { id, byRoot }, callerOf(gw, ctx.principal, ctx.ex)))) throw notFound('account', id);
    return { status: 204 };
  });
}
