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
import { CLOSE, headExchange, type Socket, type SocketRequest, type SocketSession } from '../../http/socket.ts';
import type { GatewayContext } from '../context.ts';
import type { Principal } from '../principal.ts';
import { errorCode, notePrincipal } from '../recorded.ts';
import type { RequestRecord } from '../../pipeline/request-record.ts';
import { ownOrigin } from '../shared/origin.ts';
import { authenticateControl, requireCapability } from './auth.ts';

export interface LiveFeedDoc {
  readonly path: string;
  readonly doc: RouteDoc;
  /** Root passes too. */
  readonly capability: string;
}

/** What differs between the feeds' documentation: the rest is the same for all. */
export interface FeedText {
  readonly path: string;
  readonly summary: string;
  readonly tag: string;
  /** Capability, as the sentences name it ("app-admin"); root passes too. */
  readonly capability: string;
  /** The query filters, or what a bad one is answered. */
  readonly filters: string;
  /** The 400 answer's description. */
  readonly badFilter: string;
  /** The messages, `type {fields}` each. */
  readonly messages: string;
}

export function liveFeed(f: FeedText): LiveFeedDoc {
  const doc: RouteDoc = {
    summary: f.summary, tags: [f.tag], auth: 'session',
    description: [
      `Open with a WebSocket upgrade (ws://…${f.path}); a plain request is answered 426 upgrade-required.`,
      `Needs the console session (with the console's own Origin) or an admin token, and ${f.capability} or root.`,
      `${f.filters} Every message is a JSON text frame with a type: ${f.messages}`,
      'Close codes: 1001 gateway stopping, 1008 credentials no longer valid, 1011 internal error, 1013 too slow a reader or the source restarting (reconnect). See docs/live.md.',
    ].join(' '),
    responses: {
      101: { description: 'switching to the WebSocket protocol' },
      400: { description: `not an opening handshake of RFC 6455 (websocket.handshake), or ${f.badFilter}` },
      401: { description: 'no valid session or token' },
      403: { description: `neither ${f.capability} nor root (capability), or a session without the console's Origin (origin-mismatch)` },
      429: { description: 'the session or token holds 20 live feeds open on this node already (live.too-many)' },
      426: { description: 'a request that is not a WebSocket upgrade, or one of another version than 13 (upgrade-required)', headers: { Upgrade: 'websocket', 'Sec-WebSocket-Version': '13' } },
    },
  };
  return { path: f.path, doc, capability: f.capability };
}

export function admitLive(gw: GatewayContext, ex: Exchange, feed: LiveFeedDoc, record?: RequestRecord): Principal {
  // Named on the record before the feed's own checks: a refused upgrade's line says whose it was.
  const principal = notePrincipal(record, authenticateControl(gw, ex, feed.doc, record));
  const origin = ex.headers.origin;
  const own = ownOrigin(gw, ex);
  if (principal.kind === 'session' && origin !== own) {
    throw new GatewayError('origin-mismatch', origin
      ? `The live feed opens with the console session from ${own ?? 'this address'} only, not from ${origin}.`
      : 'The live feed opens with the console session only with the console\'s Origin header (browsers send it; scripts should use a token).');
  }
  requireCapability(principal, feed.capability);
  return principal;
}

/**
 * A feed's upgrade decision (SocketRoute.accept): admitted, then `open` makes the session. The
 * upgrade is one exchange of the access log like any request (spec 1.4 rule 1, refusals
 * included): a record is opened for it, names the caller once admitted, and is closed with 101 or
 * with the refusal's status, so refused attempts on a feed (no session, another site's Origin, a
 * guessed token) leave their line.
 */
export function acceptLive(gw: GatewayContext, feed: LiveFeedDoc, open: (req: SocketRequest, head: Exchange) => SocketSession): (req: SocketRequest) => Promise<SocketSession> {
  return async (req) => {
    const record = gw.records.open(req);
    try {
      const head = headExchange(req);
      const principal = admitLive(gw, head, feed, record);
      const session = counted(gw, principal, open(req, head));
      if (record !== undefined) gw.records.close(record, false, 101);
      return session;
    } catch (err) {
      if (record !== undefined) {
        record.error = errorCode(err);
        gw.records.close(record, false, err instanceof GatewayError ? err.status : 500);
      }
      throw err;
    }
  };
}

/**
 * Feeds one session or token may hold open on a node, all feeds together. Each holds its `hello`
 * (the logs feed's may be megabytes) and up to 1 MiB more for a slow reader: without a bound, one
 * set of credentials opening sockets it never reads could hold the node's memory.
 */
export const FEEDS_PER_CREDENTIAL = 20;

/** Open feeds by credential, per gateway (tests run several in one process). */
const openFeeds = new WeakMap<GatewayContext, Map<string, number>>();

function credentialOf(p: Principal): string | null {
  return p.kind === 'session' ? `session:${p.sessionId}` : p.kind === 'token' ? `token:${p.token.id}` : null;
}

/**
 * The session, counted against its credentials' feeds: refused at the upgrade once they hold
 * FEEDS_PER_CREDENTIAL (429 `live.too-many`), and closed at once (1013) if upgrades completing
 * together passed that check side by side. Counted from `onOpen` to `onClose`, the span in which
 * a session holds anything.
 */
function counted(gw: GatewayContext, principal: Principal, session: SocketSession): SocketSession {
  const key = credentialOf(principal);
  if (key === null) return session;
  let feeds = openFeeds.get(gw);
  if (feeds === undefined) openFeeds.set(gw, (feeds = new Map()));
  const held = feeds;
  const tooMany = `at most ${FEEDS_PER_CREDENTIAL} live feeds are open at once with one session or token on a node; close one first.`;
  if ((held.get(key) ?? 0) >= FEEDS_PER_CREDENTIAL) throw new GatewayError('live.too-many', `${tooMany.charAt(0).toUpperCase()}${tooMany.slice(1)}`);
  let counting = false;
  return {
    onOpen(socket) {
      const n = (held.get(key) ?? 0) + 1;
      if (n > FEEDS_PER_CREDENTIAL) {
        socket.close(CLOSE.tryAgain, `too many feeds: ${tooMany}`);
        return;
      }
      held.set(key, n);
      counting = true;
      session.onOpen(socket);
    },
    ...(session.onMessage ? { onMessage: (text: string) => session.onMessage!(text) } : {}),
    onClose(code, reason) {
      if (counting) {
        counting = false;
        const n = (held.get(key) ?? 1) - 1;
        if (n <= 0) held.delete(key);
        else held.set(key, n);
      }
      session.onClose(code, reason);
    },
  };
}

/** A plain GET on the feed's address: a refusal that says how to open it. */
export function addLiveRoute(router: Router<Principal>, feed: LiveFeedDoc): void {
  router.add('GET', feed.path, feed.doc, (ctx) => {
    requireCapability(ctx.principal, feed.capability);
    sendProblem(ctx.ex, new GatewayError('upgrade-required', `${feed.path} is a WebSocket: open it with a WebSocket client (an upgrade request), not a plain request.`));
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
