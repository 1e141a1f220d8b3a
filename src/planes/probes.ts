import { GatewayError } from '../http/errors.ts';
import type { Router } from '../http/router.ts';
import type { GatewayContext } from './context.ts';

const READINESS = {
  type: 'object',
  required: ['status', 'database', 'actors'],
  properties: {
    status: { type: 'string', enum: ['ready'] },
    database: { type: 'string', enum: ['ok', 'unreachable', 'schema-newer'] },
    actors: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

/** The two health probes, the same on every plane (never redirected, never counted). */
export function addProbes<P>(router: Router<P>, gw: GatewayContext): void {
  router.add('GET', '/healthz', {
    summary: 'Liveness: the process is up and answering',
    tags: ['probes'], auth: 'none',
    responses: { 200: { description: 'alive', schema: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } } } },
  }, () => ({ body: { status: 'ok' } }));

  router.add('GET', '/readyz', {
    summary: 'Readiness: the database answers and every actor has started',
    tags: ['probes'], auth: 'none',
    responses: {
      200: { description: 'ready to serve', schema: READINESS },
      503: { description: 'not ready (database unreachable, a newer build migrated it, an actor restarting) or stopping' },
    },
  }, async () => {
    if (gw.draining()) throw new GatewayError('draining');
    const r = await gw.readiness();
    if (!r.ready) {
      const parts = [
        r.database === 'unreachable' ? 'the database does not answer' : undefined,
        r.database === 'schema-newer' ? 'a newer build migrated the database (replace this node with it: docs/upgrade.md)' : undefined,
        ...Object.entries(r.actors).filter(([, s]) => s !== 'ready').map(([n, s]) => `the ${n} actor is ${s}`),
      ].filter(Boolean);
      throw new GatewayError('not-ready', `The gateway is not ready: ${parts.join('; ')}.`, undefined, { database: r.database, actors: r.actors });
    }
    return { body: { status: 'ready', database: r.database, actors: r.actors } };
  });
}
