import { GatewayError } from '../../http/errors.ts';
import type { ExchangeHandler } from '../../http/exchange.ts';
import { sendFailure, serveApi } from '../../http/respond.ts';
import { Router } from '../../http/router.ts';
import type { GatewayContext } from '../context.ts';
import { ANONYMOUS_PRINCIPAL, type Principal } from '../principal.ts';
import { addProbes } from '../probes.ts';

/**
 * Data plane (default :8080): application traffic. The gateway's own addresses (the probes) are
 * answered first; every other request is matched against the routes, and a request no route
 * takes is refused with `route.unknown`, naming what was asked.
 */
export function dataPlane(gw: GatewayContext): ExchangeHandler {
  const own = new Router<Principal>();
  addProbes(own, gw);
  return async (ex) => {
    try {
      if (await serveApi(own, ex, () => ANONYMOUS_PRINCIPAL)) return;
      throw new GatewayError('route.unknown', `No route of this gateway matches ${ex.method} ${ex.path}.`);
    } catch (err) {
      sendFailure(ex, err, gw.log);
    }
  };
}
