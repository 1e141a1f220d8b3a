/** The plain ports, the redirect and the console traffic window (spec 1.2 rules 6-7, 11-12; 3.2). */
import { GatewayError, invalidField } from '../../http/errors.ts';
import { write } from '../write.ts';
import type { ActorHandlers, TellHandlers } from '../../workers/actor-runtime.ts';
import { ConsoleTrafficRow } from '../../store/entities.ts';
import { retryBusy } from '../../store/busy.ts';
import { HSTS_MAX, TLS_PLANES, type CertCalls, type CertTells, type TlsPlane, type TrafficSeen } from './messages.ts';
import { loadRows, servingCounter } from './records.ts';
import { readTlsSettings, readTraffic, writeHttpOff, writeRedirect } from './tls-settings.ts';
import { checkHttpOff } from './safety.ts';
import type { CertDeps } from './deps.ts';

type SettingsCalls = Pick<CertCalls, 'tls.ports' | 'tls.redirect' | 'tls.traffic'>;

export function settingsHandlers(deps: CertDeps): ActorHandlers<SettingsCalls> {
  return {
    'tls.ports': async ({ plane, http, via }) => {
      if (!TLS_PLANES.includes(plane)) throw invalidField('plane', 'The plane is console, app or internal.');
      if (typeof http !== 'boolean') throw invalidField('http', 'http is true (plain port open) or false (127.0.0.1 only).');
      await write(deps, 'tls', async (em, audit) => {
        const settings = await readTlsSettings(em);
        const wasOff = settings.httpOff.includes(plane);
        if (wasOff === !http) return false;
        if (!http) {
          const { placements, rows } = await loadRows(em);
          const serving = servingCounter(rows, deps.masterKey, Math.floor(deps.now() / 1000))(placements, settings.doors, plane);
          checkHttpOff(plane, serving, await readTraffic(em, deps.now()), via);
        }
        const off: TlsPlane[] = http ? settings.httpOff.filter((p) => p !== plane) : [...settings.httpOff, plane];
        await writeHttpOff(em, off, deps.now(), deps.caller()?.account ?? null);
        audit.note({ action: 'tls.ports', target: { kind: 'settings', id: `tls.ports.${plane}`, name: 'tls' }, before: { plane, http: wasOff ? false : true }, after: { plane, http } });
        return true;
      });
      return readTlsSettings(deps.store.em());
    },

    'tls.redirect': async ({ forceHttps, hstsMaxAge: asked }) => {
      if (typeof forceHttps !== 'boolean') throw invalidField('forceHttps', 'forceHttps is true or false.');
      if (asked !== undefined && (typeof asked !== 'number' || !Number.isInteger(asked) || asked < 0 || asked > HSTS_MAX)) {
        throw invalidField('hstsMaxAge', `hstsMaxAge is a whole number of seconds from 0 to ${HSTS_MAX} (two years).`);
      }
      await write(deps, 'tls', async (em, audit) => {
        const settings = await readTlsSettings(em);
        const before = settings.redirect;
        // Left out, the duration set stays (switching the redirect off and on keeps it).
        const hstsMaxAge = asked ?? before.hstsMaxAge;
        if (forceHttps && !before.forceHttps) {
          const { placements, rows } = await loadRows(em);
          if (servingCounter(rows, deps.masterKey, Math.floor(deps.now() / 1000))(placements, settings.doors, 'app') === 0) {
            throw new GatewayError('tls.nothing-to-present', 'Force HTTPS stays off: no certificate serves HTTPS on the application plane (none placed, or those placed are inactive, expired, not yet valid, not issued yet, or cannot be opened), so there is nothing to redirect to.');
          }
        }
        if (before.forceHttps === forceHttps && before.hstsMaxAge === hstsMaxAge) return false;
        await writeRedirect(em, { forceHttps, hstsMaxAge }, deps.now(), deps.caller()?.account ?? null);
        audit.note({ action: 'tls.redirect', target: { kind: 'settings', id: 'tls.redirect', name: 'tls' }, before, after: { forceHttps, hstsMaxAge } });
        return true;
      });
      return readTlsSettings(deps.store.em());
    },

    'tls.traffic': () => readTraffic(deps.store.em(), deps.now()),
  };
}

/** Console calls seen by this node: the latest per door, upserted so every node reads the pool. */
export function trafficTells(deps: CertDeps): TellHandlers<CertTells> {
  return {
    'tls.traffic': async (items: readonly TrafficSeen[]) => {
      const latest = new Map<string, TrafficSeen>();
      for (const t of items) if ((latest.get(t.door)?.at ?? -1) <= t.at) latest.set(t.door, t);
      await retryBusy(async () => {
        const em = deps.store.em();
        for (const t of latest.values()) {
          await em.upsert(ConsoleTrafficRow, { node: deps.node, door: t.door, peer: t.peer, lastSeen: t.at });
        }
      });
    },
  };
}
