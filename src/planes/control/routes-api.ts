import type { Router } from '../../http/router.ts';
import { formatTimeout, parseRoute, ROUTE_FIELDS } from '../../core/routes/route-input.ts';
import type { RouteRecord } from '../../actors/config/messages.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { idParam, listOf, notFound, seconds, STRINGS, TIMES, WRITE_REFUSALS } from './resource-docs.ts';

const CAPABILITY = 'infra-admin';

const ROUTE_BODY = {
  type: 'object',
  required: ['upstream', 'paths'],
  additionalProperties: false,
  properties: {
    upstream: { type: 'string', format: 'uri', description: 'http(s)://host[:port][/base path]' },
    paths: { ...STRINGS, minItems: 1, description: 'path prefixes; the longest matching prefix of any route wins' },
    hosts: { ...STRINGS, description: 'host names this route answers; empty: any' },
    stripPrefix: { type: 'boolean', default: false },
    rule: { type: ['object', 'null'], properties: { roles: STRINGS }, description: 'null: open. Otherwise one of the roles (after the hierarchy) is needed' },
    endpointRules: { type: 'array', items: { type: 'object', properties: { method: { type: 'string' }, path: { type: 'string', description: 'template such as /orders/{id}, matched against the path forwarded (after stripPrefix)' }, roles: STRINGS } } },
    identity: { type: 'string', enum: ['headers', 'remote-user', 'jwt'], default: 'headers' },
    timeout: { type: 'string', default: 'PT30S', description: 'ISO 8601 duration, PT1S to PT1H: no answer in time gives 504' },
    openapi: { type: ['object', 'null'], description: 'the deposited OpenAPI contract of the service' },
    organisation: { type: ['string', 'null'] },
  },
} as const;
const ROUTE = {
  ...ROUTE_BODY,
  required: [...ROUTE_FIELDS, 'id', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string' }, ...ROUTE_BODY.properties,
    // As answered, a rule and an endpoint rule carry every member (the body's may leave some out).
    rule: { ...ROUTE_BODY.properties.rule, required: ['roles'] },
    endpointRules: { ...ROUTE_BODY.properties.endpointRules, items: { ...ROUTE_BODY.properties.endpointRules.items, required: ['method', 'path', 'roles'] } },
    // The contract is the service's document, answered as deposited: any members.
    openapi: { ...ROUTE_BODY.properties.openapi, additionalProperties: true },
    ...TIMES,
  },
};

export function routeBody(r: RouteRecord) {
  return {
    id: r.id, upstream: r.upstream, paths: r.paths, hosts: r.hosts, stripPrefix: r.stripPrefix,
    rule: r.rule, endpointRules: r.endpointRules, identity: r.identity, timeout: formatTimeout(r.timeoutMs),
    openapi: r.openapi, organisation: r.organisation, createdAt: seconds(r.createdAt), updatedAt: seconds(r.updatedAt),
  };
}

export function addRoutesApi(router: Router<Principal>, gw: GatewayContext): void {
  router.add('GET', '/api/routes', {
    summary: 'List routes', tags: ['routes'], auth: 'session',
    responses: { 200: { description: 'every route, by id', schema: listOf('routes', ROUTE) }, 401: WRITE_REFUSALS[401], 403: WRITE_REFUSALS[403] },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    return { body: { routes: (await gw.config.call('route.list', null)).map(routeBody) } };
  });

  router.add('GET', '/api/routes/{id}', {
    summary: 'One route', tags: ['routes'], auth: 'session',
    responses: { 200: { description: 'the route', schema: ROUTE }, 404: { description: 'no such route' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const id = idParam(ctx.params, 'route');
    const r = await gw.config.call('route.get', { id });
    if (!r) throw notFound('route', id);
    return { body: routeBody(r) };
  });

  router.add('PUT', '/api/routes/{id}', {
    summary: 'Create or replace a route', tags: ['routes'], auth: 'session',
    description: 'Every field is replaced; an omitted optional field takes its default. Roles named must be in the catalogue, the organisation must exist. The change reaches the data plane before the answer.',
    body: ROUTE_BODY,
    responses: {
      200: { description: 'replaced', schema: ROUTE }, 201: { description: 'created', schema: ROUTE }, ...WRITE_REFUSALS,
      409: { description: 'audit.no-contract: the route keeps endpoint audit rules and its OpenAPI contract was left out' },
    },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const input = parseRoute(idParam(ctx.params, 'route'), await ctx.json());
    const { created, route } = await gw.config.call('route.put', input, callerOf(gw, ctx.principal, ctx.ex));
    return { status: created ? 201 : 200, body: routeBody(route), ...(created ? { headers: { location: `/api/routes/${route.id}` } } : {}) };
  });

  router.add('DELETE', '/api/routes/{id}', {
    summary: 'Delete a route', tags: ['routes'], auth: 'session',
    responses: { 204: { description: 'deleted' }, 404: { description: 'no such route' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const id = idParam(ctx.params, 'route');
    if (!(await gw.config.call('route.delete', { id }, callerOf(gw, ctx.principal, ctx.ex)))) throw notFound('route', id);
    return { status: 204 };
  });
}
