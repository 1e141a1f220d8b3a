/** ConfigActor, worker side. */
import { runActor } from '../../workers/actor-runtime.ts';
import { beginAttempt, endAttempt } from './signin-attempts.ts';
import { nodeServing } from '../node-serving.ts';
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

runActor<ConfigInit, ConfigCalls, ConfigEvent>(async (init, ctx) => {
  const store = await openStore({ ...init.store, poolSize: 2 }, { log: ctx.log });
  const masterKey = Buffer.from(init.masterKey, 'base64');
  let mark = '';
  const reported = new Set<string>();

  if (await ensureSigningKey(store, masterKey, ctx.clock.now())) ctx.log.info('identity signing key created');

  const serving = nodeServing({ store, node: init.node, what: 'config', log: ctx.log });
  const served = serving.served;
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
    // What this node serves, for the writers of other nodes.
    await serving.holds(Number(mark.split(',')[0] ?? 0) || 0);
  });
  await publish();

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
      ping: async () => ({ driver: store.driver, newer: await store.ping() }),
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
      await serving.stop();
      await follower.close();
      await store.close();
    },
  };
});
