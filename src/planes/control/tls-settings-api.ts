/**
 * The TLS settings (spec 1.2 rules 5-7, 11-12, 4.2, 3.2; CONTRACT.md "TLS"): which plain ports are
 * closed, who called the console in the last 30 s, the redirect and HSTS, the doors.
 */
import type { Router } from '../../http/router.ts';
import { invalidField } from '../../http/errors.ts';
import { NO_DOOR, TLS_PLANES, TRAFFIC_WINDOW_MS, type DoorPlane, type TlsPlane, type TlsSettings } from '../../actors/certs/messages.ts';
import { checkDoor } from '../../core/tls/door-names.ts';
import { ProxyTrust } from '../../http/trusted-proxies.ts';
import { clientOf, clientUnder } from '../forwarded.ts';
import { GatewayError } from '../../http/errors.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { WRITE_REFUSALS, seconds } from './resource-docs.ts';
import { viaOf } from './tls-api.ts';
import { PLANE_OF } from '../tls-doors.ts';

const TAGS = ['tls'];

const STRING_LIST = { type: 'array', items: { type: 'string' } } as const;
const PLANES_LIST = { type: 'array', items: { type: 'string', enum: ['http'] } } as const;
const DOOR_ADDRESS = { type: 'object', required: ['address', 'publicPort'], properties: { address: { type: ['string', 'null'] }, publicPort: { type: ['integer', 'null'] } } } as const;
const DOOR = {
  type: 'object',
  required: ['proxied', 'names', 'proxyAddresses', 'runtimeNames', 'internalNames', 'uncovered', 'http', 'https'],
  properties: {
    proxied: { type: 'boolean' }, names: STRING_LIST, proxyAddresses: STRING_LIST, runtimeNames: STRING_LIST,
    internalNames: { type: 'array', items: { type: 'object', required: ['name', 'covered'], properties: { name: { type: 'string' }, covered: { type: 'boolean' } } } },
    uncovered: { ...STRING_LIST, description: 'declared names no certificate serving now covers' },
    http: DOOR_ADDRESS, https: DOOR_ADDRESS,
  },
} as const;
/** The answer of every TLS settings endpoint (CONTRACT.md "TLS"). */
const SETTINGS_SCHEMA = {
  type: 'object',
  required: ['closed', 'consoleTraffic', 'trafficWindow', 'redirect', 'doors'],
  properties: {
    closed: { type: 'object', required: ['console', 'app', 'internal'], properties: { console: PLANES_LIST, app: PLANES_LIST, internal: PLANES_LIST } },
    consoleTraffic: { type: 'array', items: { type: 'object', required: ['door', 'peer', 'lastSeen'], properties: { door: { type: 'string', enum: ['http', 'https'] }, peer: { type: ['string', 'null'] }, lastSeen: { type: ['integer', 'null'], description: 'epoch seconds' } } } },
    trafficWindow: { type: 'integer', description: 'seconds' },
    redirect: { type: 'object', required: ['forceHttps', 'hstsMaxAge'], properties: { forceHttps: { type: 'boolean' }, hstsMaxAge: { type: 'integer' } } },
    doors: { type: 'object', required: ['console', 'app', 'internal'], properties: { console: DOOR, app: DOOR, internal: DOOR } },
  },
} as const;

const PLANE_PARAM = { plane: { type: 'string', enum: TLS_PLANES } } as const;
/** Doors are declared for the planes with public names: the internal plane has none. */
const DOOR_PLANES: readonly DoorPlane[] = ['console', 'app'];

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
      // Covered: by a certificate that serves the name now, within its validity (spec 7).
      const covered = (name: string) => gw.certs.view.carriesValid(p, name, gw.clock.now());
      // The runtime says the internal plane's names (GATEWAY_INTERNAL_NAMES); for the others it cannot.
      const runtimeNames = p === 'internal' ? gw.settings.internalNames : [];
      const declared = p === 'internal' ? NO_DOOR : settings.doors[p];
      return [p, {
        proxied: declared.proxied, names: declared.names, proxyAddresses: declared.proxyAddresses, runtimeNames,
        internalNames: runtimeNames.map((name) => ({ name, covered: covered(name) })),
        // Declared names no served certificate covers (gateway-served mode needs one for each).
        uncovered: declared.proxied ? [] : declared.names.filter((n) => !covered(n)),
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
    responses: { 200: { description: 'the settings', schema: SETTINGS_SCHEMA } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    return { body: await answer() };
  });

  router.add('PUT', '/api/settings/tls/ports/{plane}', {
    summary: 'Switch a plane\'s plain HTTP port on or off (off: 127.0.0.1 only); audited tls.ports', tags: TAGS, auth: 'session',
    schemas: PLANE_PARAM,
    body: { type: 'object', required: ['http'], properties: { http: { type: 'boolean' } } },
    responses: { 200: { description: 'switched; the settings', schema: SETTINGS_SCHEMA }, ...WRITE_REFUSALS, 409: { description: 'tls.nothing-to-present, tls.http-in-use' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    const plane = planeParam(ctx.params.plane);
    const body = (await ctx.json()) as Record<string, unknown> | null;
    let settings: TlsSettings;
    try {
      settings = await gw.certs.call('tls.ports', { plane, http: body?.http as boolean, via: viaOf(ctx.ex) }, callerOf(gw, ctx.principal, ctx.ex));
    } finally {
      await gw.tlsDoors.reconcile();
    }
    return { body: await answer(settings) };
  });

  router.add('PUT', '/api/settings/tls/doors/{plane}', {
    summary: 'Who serves the plane\'s public names: the gateway, or a proxy in front; audited tls.door', tags: TAGS, auth: 'session',
    schemas: { plane: { type: 'string', enum: DOOR_PLANES, description: 'doors are declared for the console and app planes; the internal plane has no public names' } },
    description: 'names: one host name each (no scheme, port, path, IP address or wildcard), a name belongs to one plane; served by the gateway, each needs a certificate placed on the plane. proxyAddresses: CIDR ranges or addresses whose X-Forwarded-For and X-Forwarded-Proto are believed (empty: loopback and private ranges). The first application name makes the issuer of every signed identity (https://<name>).',
    body: {
      type: 'object', required: ['proxied'],
      properties: { proxied: { type: 'boolean' }, names: { type: 'array', items: { type: 'string' } }, proxyAddresses: { type: 'array', items: { type: 'string' } } },
    },
    responses: { 200: { description: 'saved; the settings', schema: SETTINGS_SCHEMA }, ...WRITE_REFUSALS, 409: { description: 'tls.session-would-drop: the change would make this console session be seen as plain HTTP' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    const plane = ctx.params.plane as DoorPlane;
    if (!DOOR_PLANES.includes(plane)) throw invalidField('plane', 'Doors are declared for the console and app planes.');
    const door = checkDoor(((await ctx.json()) ?? {}) as Record<string, unknown>);
    if (plane === 'console' && ctx.principal.kind === 'session') {
      // Spec 1.2 rule 14: the operator's own session must not end up seen as plain HTTP.
      const now = clientOf(gw.certs.view, 'console', ctx.ex).secure;
      const then = clientUnder(door, door.proxied ? new ProxyTrust(door.proxyAddresses) : null, ctx.ex).secure;
      if (now && !then) {
        throw new GatewayError('tls.session-would-drop', 'This change would make your own console session be seen as plain HTTP, which would sign you out: the console would no longer believe the proxy that brings it. Make the change from a session opened through the gateway\'s own HTTPS door, or keep the proxy\'s address and names.');
      }
    }
    const settings = await gw.certs.call('tls.door', { plane, door, via: viaOf(ctx.ex) }, callerOf(gw, ctx.principal, ctx.ex));
    return { body: await answer(settings) };
  });

  router.add('PUT', '/api/settings/tls/redirect', {
    summary: 'Force HTTPS on the data plane (308) and the HSTS duration', tags: TAGS, auth: 'session',
    body: { type: 'object', required: ['forceHttps'], properties: { forceHttps: { type: 'boolean' }, hstsMaxAge: { type: 'integer', minimum: 0, maximum: 63072000, description: 'seconds; left out, the duration set keeps its value (one day by default)' } } },
    responses: { 200: { description: 'saved; the settings', schema: SETTINGS_SCHEMA }, ...WRITE_REFUSALS, 409: { description: 'tls.nothing-to-present: no certificate serves HTTPS on the application plane' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'infra-admin');
    const body = (await ctx.json()) as Record<string, unknown> | null;
    const settings = await gw.certs.call('tls.redirect', {
      forceHttps: body?.forceHttps as boolean, ...(body?.hstsMaxAge === undefined ? {} : { hstsMaxAge: body.hstsMaxAge as number }),
    }, callerOf(gw, ctx.principal, ctx.ex));
    return { body: await answer(settings) };
  });
}
