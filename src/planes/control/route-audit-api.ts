/**
 * A route's endpoint audit rules (spec 1.3 rules 12 and 13, CONTRACT.md "Audit"). Writing them
 * belongs to the licensed edition; the community edition keeps rules brought from a licensed
 * one (not applied), lets anyone allowed read and export them, and lets them be removed.
 */
import { GatewayError } from '../../http/errors.ts';
import type { Router, Schema } from '../../http/router.ts';
import { isRemoval } from '../../core/audit/rules.ts';
import { requireLicensed } from '../edition.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';
import { idParam, notFound, STRINGS, WRITE_REFUSALS } from './resource-docs.ts';

const FEATURE = 'Endpoint audit (per operation of a route\'s OpenAPI contract)';
const WRITERS = ['app-admin'] as const;
/** Reading the rules: who manages audits, and who manages routes (the route editor exports them). */
const READERS = ['app-admin', 'infra-admin'] as const;

function requireOneOf(principal: Principal, capabilities: readonly string[]): void {
  const caps = principal.kind === 'anonymous' ? [] : principal.account?.capabilities ?? [];
  if (caps.includes('root') || capabilities.some((c) => caps.includes(c))) return;
  throw new GatewayError('capability', `This action needs the ${capabilities.join(' or ')} capability (or root).`);
}

const RULE: Schema = {
  type: 'object',
  required: ['on'],
  additionalProperties: false,
  properties: {
    on: { type: 'boolean', description: 'true: each call of the operation is recorded; false: the rule is kept, switched off' },
    description: { type: 'string', maxLength: 500, description: 'the line\'s detail; default: the operation\'s summary in the contract, else "<METHOD> <template>"' },
    fields: {
      type: 'object', maxProperties: 20, description: 'audit.field.<name> attributes; names [A-Za-z0-9_.-]{1,64}',
      additionalProperties: { type: 'string', pattern: '^(path|query|header|body):', description: 'path:<variable>, query:<name>, header:<name> or body:<JSON pointer>' },
    },
    body: { type: 'boolean', description: 'keep the JSON body (64 KB at most), secret fields replaced by ***' },
    secretFields: { ...STRINGS, maxItems: 50, description: 'further field names masked in the body and the fields' },
  },
};
const RULES: Schema = {
  type: 'object',
  required: ['operations'],
  additionalProperties: false,
  properties: {
    operations: {
      type: 'object',
      description: 'keys "<METHOD> <template>" as in the route\'s OpenAPI paths (POST /orders/{id}); {} removes every rule',
      additionalProperties: RULE,
    },
  },
};

export function addRouteAuditApi(router: Router<Principal>, gw: GatewayContext): void {
  router.add('GET', '/api/routes/{id}/audit', {
    summary: 'A route\'s endpoint audit rules, as the file the route editor uploads', tags: ['routes', 'audit'], auth: 'session',
    description: 'Readable on both editions (rules kept on the community edition are not applied). {"operations": {}} when the route has none.',
    responses: { 200: { description: 'the rules', schema: RULES }, 401: WRITE_REFUSALS[401], 403: WRITE_REFUSALS[403], 404: { description: 'no such route' } },
  }, async (ctx) => {
    requireOneOf(ctx.principal, READERS);
    const id = idParam(ctx.params, 'route');
    const rules = await gw.config.call('route.audit.get', { id });
    if (rules === null) throw notFound('route', id);
    return { body: rules, headers: { 'content-disposition': `attachment; filename="${id}-audit.json"` } };
  });

  const write = async (principal: Principal, ex: Parameters<typeof callerOf>[2], id: string, body: unknown) => {
    const rules = await gw.config.call('route.audit.put', { id, body }, callerOf(gw, principal, ex));
    if (rules === false) throw notFound('route', id);
    return rules;
  };

  router.add('PUT', '/api/routes/{id}/audit', {
    summary: 'Replace a route\'s endpoint audit rules (licensed edition)', tags: ['routes', 'audit'], auth: 'session',
    description: 'Every operation named must be in the route\'s OpenAPI contract (409 audit.no-contract, audit.operation-unknown). '
      + 'The community edition answers 403 licensed-edition, except for {"operations": {}}, which removes kept rules on any edition. '
      + 'The rules reach every node\'s data plane before the answer.',
    body: RULES,
    responses: {
      200: { description: 'the rules as stored', schema: RULES }, ...WRITE_REFUSALS,
      404: { description: 'no such route' }, 409: { description: 'the route has no contract, or the contract lacks an operation named' },
    },
  }, async (ctx) => {
    requireOneOf(ctx.principal, WRITERS);
    const id = idParam(ctx.params, 'route');
    const body = await ctx.json();
    if (!isRemoval(body)) requireLicensed(gw.settings, FEATURE);
    return { body: await write(ctx.principal, ctx.ex, id, body) };
  });

  router.add('DELETE', '/api/routes/{id}/audit', {
    summary: 'Remove a route\'s endpoint audit rules (any edition)', tags: ['routes', 'audit'], auth: 'session',
    responses: { 204: { description: 'removed (or there were none)' }, 401: WRITE_REFUSALS[401], 403: WRITE_REFUSALS[403], 404: { description: 'no such route' } },
  }, async (ctx) => {
    requireOneOf(ctx.principal, WRITERS);
    await write(ctx.principal, ctx.ex, idParam(ctx.params, 'route'), { operations: {} });
    return { status: 204 };
  });
}
