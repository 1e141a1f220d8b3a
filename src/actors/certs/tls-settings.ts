/** The TLS settings as rows of the `settings` table, shared by every node. */
import type { DoorSettings } from '../../core/tls/door-names.ts';
import type { EntityManager } from '@mikro-orm/core';
import { ConsoleTrafficRow, SettingRow } from '../../store/entities.ts';
import { HSTS_DEFAULT, NO_DOOR, TLS_PLANES, TRAFFIC_WINDOW_MS, type ConsoleTraffic, type DoorPlane, type RedirectSettings, type TlsPlane, type TlsSettings } from './messages.ts';

const HTTP_OFF = 'tls.httpOff';
const REDIRECT = 'tls.redirect';
const DOORS = 'tls.doors';

export async function readTlsSettings(em: EntityManager): Promise<TlsSettings> {
  const rows = await em.find(SettingRow, { key: { $in: [HTTP_OFF, REDIRECT, DOORS] } });
  const doors = (rows.find((r) => r.key === DOORS)?.value ?? {}) as Partial<Record<DoorPlane, DoorSettings>>;
  const off = rows.find((r) => r.key === HTTP_OFF)?.value;
  const redirect = rows.find((r) => r.key === REDIRECT)?.value as Partial<RedirectSettings> | undefined;
  return {
    httpOff: TLS_PLANES.filter((p) => Array.isArray(off) && off.includes(p)),
    redirect: {
      forceHttps: redirect?.forceHttps === true,
      hstsMaxAge: typeof redirect?.hstsMaxAge === 'number' ? redirect.hstsMaxAge : HSTS_DEFAULT,
    },
    doors: { console: doors.console ?? NO_DOOR, app: doors.app ?? NO_DOOR },
  };
}

async function put(em: EntityManager, key: string, value: unknown, now: number, by: string | null): Promise<void> {
  const row = await em.findOne(SettingRow, { key });
  if (row) em.assign(row, { value, updatedAt: now, updatedBy: by });
  else em.create(SettingRow, { key, value, updatedAt: now, updatedBy: by });
}

export async function writeHttpOff(em: EntityManager, off: readonly TlsPlane[], now: number, by: string | null): Promise<void> {
  await put(em, HTTP_OFF, [...off], now, by);
}

export async function writeRedirect(em: EntityManager, redirect: RedirectSettings, now: number, by: string | null): Promise<void> {
  await put(em, REDIRECT, { ...redirect }, now, by);
}

export async function writeDoors(em: EntityManager, doors: Readonly<Record<DoorPlane, DoorSettings>>, now: number, by: string | null): Promise<void> {
  await put(em, DOORS, { console: doors.console, app: doors.app }, now, by);
}

/** Console calls in the window, pooled over every node (spec 1.2 rule 7). */
export async function readTraffic(em: EntityManager, now: number): Promise<ConsoleTraffic[]> {
  const rows = await em.find(ConsoleTrafficRow, { lastSeen: { $gte: now - TRAFFIC_WINDOW_MS } }, { orderBy: { lastSeen: 'desc' } });
  return rows.map((r) => ({ door: r.door as 'http' | 'https', peer: r.peer, lastSeen: r.lastSeen, node: r.node }));
}
