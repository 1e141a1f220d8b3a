/** ConfigActor, worker side. */
import { setTimeout as sleep } from 'node:timers/promises';
import { runActor } from '../../workers/actor-runtime.ts';
import { beginAttempt, endAttempt } from './signin-attempts.ts';
import { forgetNode, markNode, NODE_BEAT_MS, nodesBehind } from '../../store/node-marks.ts';
import { errorAttrs } from '../../log/logger.ts';
import { openStore } from '../../store/orm.ts';
import { Change, Session } from '../../store/entities.ts';
import { hashSecret, newSecret } from '../../core/secrets.ts';
import { followChanges, inOrder } from '../change-follower.ts';
import type { ConfigCalls, ConfigEvent, ConfigInit } from './messages.ts';
import { changeMark, loadSnapshot } from './snapshot.ts';
import { ensureSigningKey } from './signing-keys.ts';
import type { WriteDeps } from '../write.ts';
import { routeHandlers } from './handlers/routes.ts';
import { roleHandlers } from './handlers/roles.ts';
import { accountHandlers } from './handlers/accounts.ts';
import { tokenHandlers } from './handlers/tokens.ts';
import { organisationHandlers } from './handlers/organisations.ts';
import { vaultHandlers } from './handlers/vault.ts';
import { declarativeHandlers } from './handlers/declarative.ts';
import { routeAuditHandlers } from './handlers/route-audit.ts';
import { authorityHandlers } from './handlers/authorities.ts';
import { logHandlers } from './handlers/logs.ts';

/** How long a write waits for the other nodes to serve it, and how often it looks. */
const SERVED_WAIT_MS = 2_000;
const SERVED_POLL_MS = 10;

runActor<ConfigInit, ConfigCalls, ConfigEvent>(async (init, ctx) => {
  const store = await openStore({ ...init.store, poolSize: 2 });
  const masterKey = Buffer.from(init.masterKey, 'base64');
  let mark = '';
  const reported = new Set<string>();

  if (await ensureSigningKey(store, masterKey, ctx.clock.now())) ctx.log.info('identity signing key created');

  const queue = inOrder();
  const publish = () => queue(async () => {
    const snapshot = await loadSnapshot(store.em(), {
      now: ctx.clock.now(),
      masterKey,
      onUnsealable: (kid, reason) => {
        if (reported.has(kid)) return;
        reported.add(kid);
        ctx.log.error('identity signing key cannot be unsealed on this node', { kid, reason });
      },
    });
    mark = snapshot.mark;
    ctx.emit({ type: 'snapshot', snapshot });
    await say();
  });

  // What this node serves, for the writers of other nodes (store/node-marks.ts): after each
  // publish, and every few seconds to say it is alive. A failure is said once; the next try follows.
  let markFailing = false;
  const newest = () => Number(mark.split(',')[0] ?? 0) || 0;
  const say = async () => {
    try {
      await markNode(store, init.node, newest());
      markFailing = false;
    } catch (err) {
      if (!markFailing) ctx.log.warn('cannot say which configuration this node serves; writers on other nodes will not wait for it', errorAttrs(err));
      markFailing = true;
    }
  };
  await publish();
  const beat = setInterval(() => void say(), NODE_BEAT_MS);
  beat.unref();

  /** A write answered once the other nodes alive serve it, or after SERVED_WAIT_MS, said. */
  const served = async (id: number): Promise<void> => {
    const until = Date.now() + SERVED_WAIT_MS;
    let behind = await nodesBehind(store, init.node, id);
    while (behind.length > 0 && Date.now() < until) {
      await sleep(SERVED_POLL_MS);
      behind = await nodesBehind(store, init.node, id);
    }
    if (behind.length > 0) ctx.log.warn('a configuration change is answered before every node serves it', { change: id, nodes: behind.join(','), waitedMs: SERVED_WAIT_MS });
  };

  const follower = await followChanges({
    store, log: ctx.log, pollMs: init.pollMs, what: 'configuration',
    readMark: () => changeMark(store.em()), publishedMark: () => mark, publish,
  });

  const deps: WriteDeps = {
    store, masterKey, node: init.node, now: () => ctx.clock.now(), caller: () => ctx.caller(), publish,
    written: (rows) => ctx.emit({ type: 'audit.written', rows: [...rows] }),
    served,
  };

  return {
    handlers: {
      ping: async () => {
        await store.ping();
        return { driver: store.driver };
      },
      'session.create': async ({ account, scope, ttlMs }) => {
        const secret = newSecret('mks_');
        const now = ctx.clock.now();
        const session = { id: hashSecret(secret), account, scope, expiresAt: now + ttlMs };
        const em = store.em();
        em.create(Session, { ...session, createdAt: now });
        const change = em.create(Change, { kind: 'session', at: now });
        await em.flush();
        // Pushed before the reply (same port, in order): the session is usable when the call returns.
        // After any snapshot being read meanwhile, which would not hold it.
        await queue(() => ctx.emit({ type: 'session.added', session }));
        await served(change.id);
        return { secret, expiresAt: session.expiresAt };
      },
      'session.delete': async ({ id }) => {
        const em = store.em();
        await em.nativeDelete(Session, { id });
        const change = em.create(Change, { kind: 'session', at: ctx.clock.now() });
        await em.flush();
        await queue(() => ctx.emit({ type: 'session.removed', id }));
        // Signed out on every node from the answer on.
        await served(change.id);
        return null;
      },
      'signin.begin': ({ name }) => beginAttempt(store, name, ctx.clock.now()),
      'signin.end': ({ name, attempt, ok }) => endAttempt(store, name, attempt, ok, ctx.clock.now()),
      ...tokenHandlers(deps),
      ...routeHandlers(deps),
      ...roleHandlers(deps),
      ...accountHandlers(deps),
      ...organisationHandlers(deps),
      ...vaultHandlers(deps),
      ...declarativeHandlers(deps),
      ...routeAuditHandlers(deps),
      ...authorityHandlers(deps),
      ...logHandlers(deps),
    },
    stop: async () => {
      clearInterval(beat);
      await forgetNode(store, init.node).catch(() => { /* its row ages out in NODE_ALIVE_MS */ });
      await follower.close();
      await store.close();
    },
  };
});
