import { GatewayError } from '../../http/errors.ts';
import type { ExchangeHandler } from '../../http/exchange.ts';
import { addOpenApiDocument } from '../../http/openapi.ts';
import { serveApi } from '../../http/respond.ts';
import { addLogsApi } from './logs-api.ts';
import { addMetricsApi } from './metrics-api.ts';
import { addMetricsLiveRoute } from './metrics-live.ts';
import { addLogsLiveRoute } from './logs-live.ts';
import { notePrincipal, serveRecorded, type RecordedHandler } from '../recorded.ts';
import { Router } from '../../http/router.ts';
import type { GatewayContext } from '../context.ts';
import type { Principal } from '../principal.ts';
import { addProbes } from '../probes.ts';
import { authenticateControl } from './auth.ts';
import { addClockRoutes } from './clock-routes.ts';
import { addSessionEndpoints } from '../shared/session-endpoints.ts';
import { addRoutesApi } from './routes-api.ts';
import { addRouteAuditApi } from './route-audit-api.ts';
import { addRolesApi } from './roles-api.ts';
import { addAccountsApi } from './accounts-api.ts';
import { addTokensApi } from './tokens-api.ts';
import { addOrganisationsApi } from './organisations-api.ts';
import { addVaultApi } from './vault-api.ts';
import { addAuthoritiesApi } from './authorities-api.ts';
import { addSchedulesApi } from '../shared/schedules-api.ts';
import { addSettingsApi } from './settings-api.ts';
import { addAuditApi } from './audit-api.ts';
import { addTlsApi } from './tls-api.ts';
import { addTlsSettingsApi } from './tls-settings-api.ts';
import { addSchedulesLiveRoute } from './schedules-live.ts';
import { addAcmeApi } from './acme-api.ts';
import { answerAcmeChallenge } from '../acme-challenge.ts';
import { loadConsoleAssets, type ConsoleAssets } from './console-assets.ts';

export function controlRouter(gw: GatewayContext): Router<Principal> {
  const router = new Router<Principal>();
  addProbes(router, gw);
  addSessionEndpoints(router, gw, 'console');
  addClockRoutes(router, gw);
  addRoutesApi(router, gw);
  addRouteAuditApi(router, gw);
  addRolesApi(router, gw);
  addAccountsApi(router, gw);
  addTokensApi(router, gw);
  addOrganisationsApi(router, gw);
  addVaultApi(router, gw);
  addAuthoritiesApi(router, gw);
  addSchedulesLiveRoute(router); // before /api/schedules/{id}, which would take "live" as an id
  addSchedulesApi(router, gw, 'control');
  addSettingsApi(router, gw);
  addAuditApi(router, gw);
  addLogsLiveRoute(router);
  addLogsApi(router, gw);
  addMetricsLiveRoute(router);
  addMetricsApi(router, gw);
  addTlsApi(router, gw);
  addTlsSettingsApi(router, gw);
  addAcmeApi(router, gw);
  addOpenApiDocument(router, '/api/openapi.json', 'This document: the control plane\'s API', {
    title: 'Meerkat control plane',
    version: gw.version,
    description: 'Operators\' console and admin API. Errors are application/problem+json with a stable code (docs/errors.md). The console itself (a single-page application, docs/console.md) is served at / and at each screen\'s address (/scheduler, /tls, /audit, /logs, /data-plane/metrics, /access); those addresses are pages, not part of this API.',
  });
  return router;
}

/** Control plane (default :9090): console and admin API. */
export function controlPlane(gw: GatewayContext, assets: ConsoleAssets = loadConsoleAssets()): ExchangeHandler {
  const router = controlRouter(gw);
  if (!assets.built) gw.log.warn('the console is not built: its pages answer 503 until npm run build has run', { code: 'console.not-built' });
  const serve: RecordedHandler = async (ex, record) => {
    // An authority validating an order is no console caller: answered before the traffic window counts.
    if (answerAcmeChallenge(gw, ex)) return;
    // The console traffic window (spec 1.2 rule 7): every call but the probes, per door.
    if (ex.path !== '/healthz' && ex.path !== '/readyz') gw.certs.consoleTraffic(ex.secure ? 'https' : 'http', ex.remoteAddress);
    if (assets.serve(ex)) return;
    const served = await serveApi(router, ex, (doc) => notePrincipal(record, authenticateControl(gw, ex, doc, record)));
    if (!served) throw new GatewayError('not-found', `Nothing is served at ${ex.path} on the control plane.`);
  };
  return (ex) => serveRecorded(gw, ex, serve);
}
