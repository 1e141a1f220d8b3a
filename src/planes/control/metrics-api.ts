/**
 * The traffic metrics of the data plane (spec 1.5; CONTRACT.md "Metrics"): the snapshot the
 * console's screen and its live feed start with, and per route its endpoints over the same
 * minute. Root or gateway-admin. Summed over every node; each point says how many it covers.
 */
import type { Router } from '../../http/router.ts';
import type { GatewayContext } from '../context.ts';
import type { Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { GatewayError } from '../../http/errors.ts';
import { idParam, notFound } from './resource-docs.ts';

export const METRICS_CAPABILITY = 'gateway-admin';
const TAGS = ['metrics'];

const NUMBERS = {
  type: 'object', description: 'over the last minute (period "60 s"): requests, failed, rps, p50 and p95 in ms (null with no request), from HDR histograms merged over the minute',
  required: ['period', 'requests', 'failed', 'rps', 'p50', 'p95'],
  properties: { period: { type: 'string' }, requests: { type: 'integer' }, failed: { type: 'integer' }, rps: { type: 'number' }, p50: { type: ['number', 'null'] }, p95: { type: ['number', 'null'] } },
} as const;

const SNAPSHOT = {
  type: 'object',
  required: ['interval', 'nodes', 'points', 'minute', 'routes', 'rankings'],
  properties: {
    interval: { type: 'integer', description: 'seconds between points: 5' },
    nodes: { type: 'integer', description: 'nodes whose summary is in the sum' },
    points: {
      type: 'array', description: 'the last hour, 720 points oldest first',
      items: { type: 'object', required: ['t', 'answered', 'failed', 'nodes'], properties: { t: { type: 'integer', description: 'epoch s the interval starts' }, answered: { type: 'integer' }, failed: { type: 'integer' }, nodes: { type: 'integer', description: 'nodes whose curve covers the interval' } } },
    },
    minute: NUMBERS,
    routes: {
      type: 'array', description: 'each route over the same minute',
      items: { type: 'object', required: ['route', 'requests', 'failed', 'p95', 'totalMs'], properties: { route: { type: 'string' }, requests: { type: 'integer' }, failed: { type: 'integer' }, p95: { type: ['number', 'null'], description: 'ms' }, totalMs: { type: 'number' } } },
    },
    rankings: {
      type: 'object', description: 'route ids, ranked',
      required: ['slowest', 'failing', 'totalTime'],
      properties: {
        slowest: { type: 'array', items: { type: 'string' }, description: 'highest p95 first' },
        failing: { type: 'array', items: { type: 'string' }, description: 'most failed answers first; routes with none are not ranked' },
        totalTime: { type: 'array', items: { type: 'string' }, description: 'most time spent answering first' },
      },
    },
  },
} as const;

const COUNTS = { requests: { type: 'integer' }, failed: { type: 'integer' }, p95: { type: ['number', 'null'], description: 'ms' } } as const;

const ROUTE_ENDPOINTS = {
  type: 'object',
  required: ['route', 'period', 'node', 'nodes', 'endpoints'],
  properties: {
    route: { type: 'string' }, period: { type: 'string', description: '60 s' }, node: { type: 'string', description: 'the node that answered' },
    nodes: { type: 'integer', description: 'nodes whose counts are in the sums' },
    endpoints: {
      type: 'array',
      items: {
        type: 'object',
        required: ['template', 'deduced', 'requests', 'failed', 'p95', 'history'],
        properties: {
          template: { type: 'string', description: 'GET /orders/{id}' }, deduced: { type: 'boolean' }, ...COUNTS,
          history: { type: 'array', items: { type: 'object', required: ['t', 'requests', 'failed', 'p95'], properties: { t: { type: 'integer', description: 'the minute, epoch s' }, ...COUNTS } } },
        },
      },
    },
  },
} as const;

/** The metrics take no query parameter: one is refused, never ignored (as the other lists do). */
export function refuseQuery(query: string, what: string): void {
  if (query === '') return;
  throw new GatewayError('filter.invalid', `${what} takes no query parameter.`, new URLSearchParams(query).keys().next().value ?? 'query');
}

export function addMetricsApi(router: Router<Principal>, gw: GatewayContext): void {
  router.add('GET', '/api/metrics', {
    summary: 'Traffic of the data plane over the last hour, the last minute\'s numbers and the routes ranked', tags: TAGS, auth: 'session',
    description: 'Failed counts the outcomes failed and upstream-down. Health probes are never counted. No label is a user, an address or a raw path.',
    responses: { 200: { description: 'the snapshot the live feed starts with', schema: SNAPSHOT }, 400: { description: 'a query parameter (none is taken: filter.invalid)' }, 401: { description: 'not signed in' }, 403: { description: 'neither gateway-admin nor root' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, METRICS_CAPABILITY);
    refuseQuery(ctx.ex.query, 'GET /api/metrics');
    return { body: await gw.metrics.call('metrics.snapshot', null) };
  });

  router.add('GET', '/api/metrics/routes/{id}', {
    summary: 'A route\'s endpoints over the last minute, with one history point a minute for seventy minutes', tags: TAGS, auth: 'session',
    description: 'Each endpoint is a template (GET /orders/{id}): declared by the route (its OpenAPI document, its endpoint rules) or deduced from the paths seen (deduced: true; identifiers folded into {id}; at most 200 per route, the rest in "(other)"). Each call is counted by the node that answered it and every node lists the cluster\'s sum (nodes: how many); a history point several nodes had adds their counts and shows the largest of their p95.',
    responses: { 400: { description: 'a bad route id (field.invalid), or a query parameter (filter.invalid)' }, 401: { description: 'not signed in' }, 403: { description: 'neither gateway-admin nor root' }, 404: { description: 'no route has this id, and nothing was counted under it in the last seventy minutes (a removed route keeps its history until then)' }, 200: { description: 'the route\'s endpoints', schema: ROUTE_ENDPOINTS } },
  }, async (ctx) => {
    requireCapability(ctx.principal, METRICS_CAPABILITY);
    refuseQuery(ctx.ex.query, 'GET /api/metrics/routes/{id}');
    const id = idParam(ctx.params, 'route');
    const answer = await gw.metrics.call('metrics.route', { id });
    // A route deleted in the last minute still has its numbers; one never seen has none.
    if (answer.endpoints.length === 0 && !gw.config.view.routesById.has(id)) throw notFound('route', id);
    return { body: { ...answer, node: gw.settings.nodeName } };
  });
}
