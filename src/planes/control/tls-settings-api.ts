/**
 * The TLS settings (spec 1.2 rules 5-7, 11-12, 4.2, 3.2; CONTRACT.md "TLS"): which plain ports are
 * closed, who called the console in the last 30 s, the redirect and HSTS, the doors.
 */
import type { Router } from '../../http/router.ts';
import { invalidField } from '../../http/errors.ts';
import { TLS_PLANES, TRAFFIC_WINDOW_MS, type TlsPlane, type TlsSettings } from '../../actors/certs/messages.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { WRITE_REFUSALS, seconds } from './resource-docs.ts';
import { viaOf } from './tls-api.ts';
import { PLANE_OF } from '../tls-doors.ts';
import { covers } from '../../core/tls/names.ts';

const TAGS = ['tls'];

function planeParam(raw: string | undefined): TlsPlane {
  if (!TLS_PLANES.includes(raw as TlsPlane)) throw invalidField('plane', 'The plane is console, app or internal.');
  return raw as TlsPlane;
}

export function addTlsSettingsApi(router: Router<Principal>, gw: GatewayContext): void {
  const answer = async (settings: TlsSettings = gw.certs.view.settings) => {
    const traffic = await gw.certs.call('tls.traffic', null);
    const closed = Object.fromEntries(TLS_PLANES.map((p) => [p, settings.httpOff.includes(p) ? ['http'] : []]));
    const doors = Object.fromEntries(TLS_PLANES.map((p) => {
      const https = gw.doors.https(PLANE_OF[p]);
      const served = gw.certs.view.served(p);
      const runtimeNames = p === 'internal' ? gw.settings.internalNames : [];
      return [p, {
        proxied: false, names: [], proxyAddresses: [], runtimeNames,
        internalNames: runtimeNames.map((name) => ({ name, covered: served.some((c) => covers(c.names, name)) })),
        uncovered: [],
        http: { address: gw.doors.plain(PLANE_OF[p])?.address ?? null, publicPort: gw.settings.publicPorts[`${p}-http`] ?? null },
        https: { address: https?.address ?? null, publicPort: gw.settings.publicPorts[p] ?? null },
      }];
    }));
    return {
      closed,
      consoleTraffic: (['http', 'https'] as const).map((door) => {
        const seen = traffic.find((t) => t.door === door);
        return { door, peer: seen?.peer ?? null, lastSeen: seen ? seconds(seen.lastSeen) : null };
      }),
      trafficWindow: TRAFFIC_WINDOW_MS / 1000,
      redirect: settings.redirect,
      doors,
    };
  };

  router.add('GET', '/api/settings/tls', {
    summary: 'TLS settings: closed plain ports, console traffic of the last 30 s, redirect, doors', tags: TAGS, auth: 'session',
    description: 'consoleTraffic has one entry per console door (http, https): the peer of the latest call in the window, or null ("Nothing in the last 30 s"), pooled over every node; probes are not counted.',
    responses: { 200: { description: 'the settings' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    return { body: await answer() };
  });

  router.add('PUT', '/api/settings/tls/ports/{plane}', {
    summary: 'Switch a plane\'s plain HTTP port on or off (off: 127.0.0.1 only); audited tls.ports', tags: TAGS, auth: 'session',
    body: { type: 'object', required: ['http'], properties: { http: { type: 'boolean' } } },
    responses: { 200: { description: 'switched; the settings' }, ...WRITE_REFUSALS, 409: { description: 'tls.nothing-to-present, tls.http-in-use' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    const plane = planeParam(ctx.params.plane);
    const body = (await ctx.json()) as Record<string, unknown> | null;
    let settings: TlsSettings;
    try {
      settings = await gw.certs.call('tls.ports', { plane, http: body?.http as boolean, via: viaOf(ctx.ex) }, callerOf(ctx.principal, ctx.ex));
    } finally {
      await gw.tlsDoors.reconcile();
    }
    return { body: await answer(settings) };
  });

  router.add('PUT', '/api/settings/tls/redirect', {
    summary: 'Force HTTPS on the data plane (308) and the HSTS duration', tags: TAGS, auth: 'session',
    body: { type: 'object', required: ['forceHttps', 'hstsMaxAge'], properties: { forceHttps: { type: 'boolean' }, hstsMaxAge: { type: 'integer', minimum: 0, maximum: 63072000 } } },
    responses: { 200: { description: 'saved; the settings' }, ...WRITE_REFUSALS },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    const body = (await ctx.json()) as Record<string, unknown> | null;
    const settings = await gw.certs.call('tls.redirect', {
      forceHttps: body?.forceHttps as boolean, hstsMaxAge: (body?.hstsMaxAge ?? 86_400) as number,
    }, callerOf(ctx.principal, ctx.ex));
    return { body: await answer(settings) };
  });
}
