import type { Router } from '../../http/router.ts';
import { parseRole } from '../../core/roles/role-input.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { idParam, listOf, notFound, STRINGS, WRITE_REFUSALS } from './resource-docs.ts';

const CAPABILITY = 'app-admin';
const ROLE = {
  type: 'object',
  required: ['name', 'implies', 'grants'],
  properties: { name: { type: 'string' }, implies: STRINGS, grants: { ...STRINGS, description: 'this role and everything it implies, transitively' } },
} as const;

export function addRolesApi(router: Router<Principal>, gw: GatewayContext): void {
  const body = (name: string) => {
    const role = gw.config.view.rolesByName.get(name);
    return role && { name, implies: role.implies, grants: gw.config.view.roles.expand([name]) };
  };

  router.add('GET', '/api/roles', {
    summary: 'The roles catalogue', tags: ['roles'], auth: 'session',
    responses: { 200: { description: 'every role', schema: listOf('roles', ROLE) } },
  }, (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    return { body: { roles: [...gw.config.view.rolesByName.keys()].map((n) => body(n)) } };
  });

  router.add('GET', '/api/roles/{name}', {
    summary: 'One role', tags: ['roles'], auth: 'session',
    responses: { 200: { description: 'the role', schema: ROLE }, 404: { description: 'no such role' } },
  }, (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const name = idParam(ctx.params, 'role', 'name');
    const role = body(name);
    if (!role) throw notFound('role', name);
    return { body: role };
  });

  router.add('PUT', '/api/roles/{name}', {
    summary: 'Create or replace a role', tags: ['roles'], auth: 'session',
    description: 'implies lists roles this one grants as well; they must exist, and a cycle is refused.',
    body: { type: 'object', additionalProperties: false, properties: { implies: STRINGS } },
    responses: { 200: { description: 'replaced', schema: ROLE }, 201: { description: 'created', schema: ROLE }, ...WRITE_REFUSALS },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const input = parseRole(idParam(ctx.params, 'role', 'name'), await ctx.json());
    const { created } = await gw.config.call('role.put', input, callerOf(gw, ctx.principal, ctx.ex));
    return { status: created ? 201 : 200, body: body(input.name), ...(created ? { headers: { location: `/api/roles/${input.name}` } } : {}) };
  });

  router.add('DELETE', '/api/roles/{name}', {
    summary: 'Delete a role', tags: ['roles'], auth: 'session',
    responses: { 204: { description: 'deleted' }, 404: { description: 'no such role' }, 409: { description: 'still named by routes, accounts, tokens or roles (role.in-use)' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const name = idParam(ctx.params, 'role', 'name');
    if (!(await gw.config.call('role.delete', { name }, callerOf(gw, ctx.principal, ctx.ex)))) throw notFound('role', name);
    return { status: 204 };
  });
}
