/**
 * What every live feed of the control plane shares (docs/live.md): the upgrade is admitted like a
 * control-plane request (an admin token, or the console session with the console's own Origin,
 * since a browser lets any page open a WebSocket with the cookie) and needs the feed's
 * capability; a plain GET on the feed's address says how to open it (426); the credentials are
 * checked again before each message, and a feed whose caller lost them closes with 1008.
 */
import { GatewayError } from '../../http/errors.ts';
import { sendProblem } from '../../http/respond.ts';
import type { Exchange } from '../../http/exchange.ts';
import type { RouteDoc, Router } from '../../http/router.ts';
import { CLOSE, type Socket } from '../../http/socket.ts';
import type { GatewayContext } from '../context.ts';
import type { Principal } from '../principal.ts';
import { ownOrigin } from '../shared/origin.ts';
import { authenticateControl, requireCapability } from './auth.ts';

export interface LiveFeedDoc {
  readonly path: string;
  readonly doc: RouteDoc;
  /** Root passes too. */
  readonly capability: string;
}

export function admitLive(gw: GatewayContext, ex: Exchange, feed: LiveFeedDoc): Principal {
  const principal = authenticateControl(gw, ex, feed.doc);
  const origin = ex.headers.origin;
  if (principal.kind === 'session' && origin !== ownOrigin(ex)) {
    throw new GatewayError('origin-mismatch', origin
      ? `The live feed opens with the console session from ${ownOrigin(ex) ?? 'this address'} only, not from ${origin}.`
      : 'The live feed opens with the console session only with the console\'s Origin header (browsers send it; scripts should use a token).');
  }
  requireCapability(principal, feed.capability);
  return principal;
}

/** A plain GET on the feed's address: a refusal that says how to open it. */
export function addLiveRoute(router: Router<Principal>, feed: LiveFeedDoc): void {
  router.add('GET', feed.path, feed.doc, (ctx) => {
    requireCapability(ctx.principal, feed.capability);
    sendProblem(ctx.ex, new GatewayError('upgrade-required', `${feed.path} is a WebSocket: open it with a WebSocket client (an upgrade request), not a plain request.`), { upgrade: 'websocket' });
    return {};
  });
}

/** Checks the credentials again before a message; false (and the socket closed with 1008) once they no longer hold. */
export function stillAdmitted(gw: GatewayContext, head: Exchange, feed: LiveFeedDoc, socket: Socket | undefined): boolean {
  try {
    admitLive(gw, head, feed);
    return true;
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    socket?.close(CLOSE.policy, `credentials no longer valid: ${err.detail}`);
    return false;
  }
}
