/** The doors' proxy mode (spec 1.2 rules 13-18): who serves a plane's public names. */
import type { DoorSettings } from '../../core/tls/door-names.ts';
import { GatewayError, invalidField } from '../../http/errors.ts';
import { write } from '../write.ts';
import type { ActorHandlers } from '../../workers/actor-runtime.ts';
import { checkDoor, nameTakenRefusal, namesTakenByOtherPlane } from '../../core/tls/door-names.ts';
import { covers } from '../../core/tls/names.ts';
import { PLANE_NAMES, type CertCalls, type DoorPlane } from './messages.ts';
import { loadRows, presentable, servingCounter } from './records.ts';
import { checkLeaving } from './safety.ts';
import { readTlsSettings, readTraffic, writeDoors } from './tls-settings.ts';
import type { CertDeps } from './deps.ts';

export function doorHandlers(deps: CertDeps): ActorHandlers<Pick<CertCalls, 'tls.door'>> {
  return {
    'tls.door': async ({ plane, door, via }) => {
      if (plane !== 'console' && plane !== 'app') throw invalidField('plane', 'Doors are declared for the console and app planes.');
      const asked = checkDoor(door);
      await write(deps, 'tls', async (em, audit) => {
        const settings = await readTlsSettings(em);
        const other: DoorPlane = plane === 'console' ? 'app' : 'console';
        const taken = namesTakenByOtherPlane(asked.names, settings.doors[other].names);
        if (taken !== null) throw nameTakenRefusal(taken, PLANE_NAMES[other]);
        if (!asked.proxied) {
          // Gateway-served: the gateway presents the public names, so each needs a certificate
          // there that serves now (spec 7: "a name no served certificate covers"): issued, valid
          // today, its key opened on this node. An expired one carries the name but serves no one.
          const { rows, placements } = await loadRows(em);
          const nowS = Math.floor(deps.now() / 1000);
          const served = rows.filter((r) => r.certPem && placements.some((p) => p.id === r.id && p.plane === plane) && presentable(r, deps.masterKey, nowS));
          const uncovered = asked.names.find((n) => !served.some((r) => covers(r.names, n)));
          if (uncovered !== undefined) {
            throw new GatewayError('tls.name-invalid', `"${uncovered}" is carried by no certificate placed on the ${PLANE_NAMES[plane]} plane that serves now (issued, within its validity, its key opened on this node); place one that carries it, or declare the plane as served by a proxy.`, 'names');
          }
        }
        const before = settings.doors[plane];
        if (JSON.stringify(before) === JSON.stringify(asked)) return false;
        // A mode leaves placed certificates inactive: it may not take away the last one serving.
        const { rows, placements } = await loadRows(em);
        const placedHere = placements.filter((p) => p.plane === plane).length;
        if (placedHere > 0) {
          const serving = servingCounter(rows, deps.masterKey, Math.floor(deps.now() / 1000));
          checkLeaving(plane, {
            placedAfter: placedHere,
            servingBefore: serving(placements, settings.doors, plane),
            servingAfter: serving(placements, { ...settings.doors, [plane]: asked }, plane),
          }, settings.httpOff, await readTraffic(em, deps.now()), via ?? null, 'door-mode');
        }
        await writeDoors(em, { ...settings.doors, [plane]: asked }, deps.now(), deps.caller()?.account ?? null);
        audit.note({ action: 'tls.door', target: { kind: 'settings', id: `tls.door.${plane}`, name: 'tls' }, before: { plane, ...before }, after: { plane, ...asked } });
        return true;
      });
      return readTlsSettings(deps.store.em());
    },
  };
}
