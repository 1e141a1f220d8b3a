/** ConfigActor, worker side. */
import { runActor } from '../../workers/actor-runtime.ts';
import { openStore } from '../../store/orm.ts';
import { Change, Session } from '../../store/entities.ts';
import { hashSecret, newSecret } from '../../core/secrets.ts';
import { mintToken } from '../../core/tokens/mint.ts';
import { errorAttrs } from '../../log/logger.ts';
import type { ConfigCalls, ConfigEvent, ConfigInit } from './messages.ts';
import { latestChange, loadSnapshot } from './snapshot.ts';

runActor<ConfigInit, ConfigCalls, ConfigEvent>(async (init, ctx) => {
  const store = await openStore({ ...init.store, poolSize: 2 });
  let version = 0;

  const publish = async () => {
    const snapshot = await loadSnapshot(store.em(), ctx.clock.now());
    version = snapshot.version;
    ctx.emit({ type: 'snapshot', snapshot });
  };
  await publish();

  // Other processes (nodes sharing PostgreSQL, the CLI on the SQLite file) write change rows;
  // this loop folds them in. It reports failures and keeps going.
  let failing = false;
  let tick: Promise<void> = Promise.resolve();
  const poll = setInterval(() => {
    tick = (async () => {
      try {
        if ((await latestChange(store.em())) > version) await publish();
        if (failing) ctx.log.info('configuration store reachable again');
        failing = false;
      } catch (err) {
        if (!failing) ctx.log.warn('cannot read configuration changes; serving the last snapshot', errorAttrs(err));
        failing = true;
      }
    })();
  }, init.pollMs);

  return {
    handlers: {
      ping: async () => {
        await store.ping();
        return { driver: store.driver };
      },
      'session.create': async ({ account, ttlMs }) => {
        const secret = newSecret('mks_');
        const now = ctx.clock.now();
        const session = { id: hashSecret(secret), account, expiresAt: now + ttlMs };
        const em = store.em();
        em.create(Session, { ...session, createdAt: now });
        em.create(Change, { kind: 'session', at: now });
        await em.flush();
        // Pushed before the reply (same port, in order): the session is usable when the call returns.
        ctx.emit({ type: 'session.added', session });
        return { secret, expiresAt: session.expiresAt };
      },
      'session.delete': async ({ id }) => {
        const em = store.em();
        await em.nativeDelete(Session, { id });
        em.create(Change, { kind: 'session', at: ctx.clock.now() });
        await em.flush();
        ctx.emit({ type: 'session.removed', id });
        return null;
      },
      'token.create': async (req) => {
        const minted = await mintToken(store.em(), req, ctx.clock.now());
        await publish();
        return minted;
      },
    },
    stop: async () => {
      clearInterval(poll);
      await tick;
      await store.close();
    },
  };
});
