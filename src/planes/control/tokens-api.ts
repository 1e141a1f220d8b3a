import type { Router } from '../../http/router.ts';
import { parseToken } from '../../core/tokens/token-input.ts';
import type { TokenRecord } from '../../actors/config/messages.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { idParam, listOf, notFound, seconds, STRINGS, WRITE_REFUSALS } from './resource-docs.ts';

const TOKEN = {
  type: 'object',
  required: ['id', 'name', 'kind', 'account', 'routes', 'roles', 'organisations', 'createdAt', 'revokedAt'],
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, kind: { type: 'string', enum: ['admin', 'personal', 'schedules'] },
    account: { type: ['string', 'null'] }, routes: { type: ['array', 'null'], items: { type: 'string' } },
    roles: { type: ['array', 'null'], items: { type: 'string' } }, organisations: { type: ['array', 'null'], items: { type: 'string' } }, createdAt: { type: 'integer' }, revokedAt: { type: ['integer', 'null'] },
  },
} as const;

function tokenBody(t: TokenRecord) {
  return { ...t, createdAt: seconds(t.createdAt), revokedAt: t.revokedAt === null ? null : seconds(t.revokedAt) };
}

/** Tokens are minted and revoked by root (CONTRACT.md); the secret appears once. */
export function addTokensApi(router: Router<Principal>, gw: GatewayContext): void {
  router.add('POST', '/api/tokens', {
    summary: 'Mint a token', tags: ['tokens'], auth: 'session',
    description: 'admin: the account\'s console rights, for scripts (defaults to the caller\'s account). personal: an account\'s identity on the data plane. schedules: the scheduling API on the internal plane, within routes (ids or *), roles and organisations (ids or *; none when not given: its schedules act for no organisation). The secret is in this answer only; the gateway keeps its SHA-256.',
    body: { type: 'object', required: ['name', 'kind'], additionalProperties: false, properties: { name: { type: 'string' }, kind: { type: 'string', enum: ['admin', 'personal', 'schedules'] }, account: { type: 'string', description: 'account id or name' }, routes: STRINGS, roles: STRINGS, organisations: STRINGS } },
    responses: { 201: { description: 'minted', schema: { type: 'object', required: ['id', 'name', 'kind', 'token'], properties: { id: { type: 'string' }, name: { type: 'string' }, kind: { type: 'string' }, token: { type: 'string' } } } }, ...WRITE_REFUSALS },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'root');
    const input = parseToken(await ctx.json());
    const caller = ctx.principal.kind === 'anonymous' ? undefined : ctx.principal.account?.id;
    const account = input.kind === 'admin' ? input.account ?? caller ?? null : input.account ?? null;
    const minted = await gw.config.call('token.create', { name: input.name, kind: input.kind, account, routes: input.routes, roles: input.roles, organisations: input.organisations }, callerOf(gw, ctx.principal, ctx.ex));
    return { status: 201, headers: { location: `/api/tokens/${minted.id}` }, body: minted };
  });

  router.add('GET', '/api/tokens', {
    summary: 'List tokens (never their secrets)', tags: ['tokens'], auth: 'session',
    responses: { 200: { description: 'every token, revoked ones included', schema: listOf('tokens', TOKEN) } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'root');
    return { body: { tokens: (await gw.config.call('token.list', null)).map(tokenBody) } };
  });

  router.add('DELETE', '/api/tokens/{id}', {
    summary: 'Revoke a token', tags: ['tokens'], auth: 'session',
    description: 'Effective before the answer on this node, and within a second on every other node.',
    responses: { 204: { description: 'revoked' }, 404: { description: 'no such token, or revoked already' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'root');
    const id = idParam(ctx.params, 'token');
    if (!(await gw.config.call('token.revoke', { id }, callerOf(gw, ctx.principal, ctx.ex)))) throw notFound('live token', id);
    return { status: 204 };
  });
}
