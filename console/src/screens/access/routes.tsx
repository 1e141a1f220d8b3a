/**
 * Routes (docs/core.md), read here and written through the API or the declarative file: where
 * each prefix goes, who may pass, and how the caller's identity reaches the service.
 */
import { ErrorLine } from '../../components/common.tsx';
import { joined, useLoad } from './load.ts';

interface RouteRow {
  readonly id: string;
  readonly upstream: string;
  readonly paths: readonly string[];
  readonly hosts: readonly string[];
  readonly stripPrefix: boolean;
  readonly rule: { readonly roles: readonly string[] } | null;
  readonly endpointRules: readonly { readonly method: string; readonly path: string; readonly roles: readonly string[] }[];
  readonly identity: string;
  readonly timeout: string;
  readonly openapi: unknown;
  readonly organisation: string | null;
}

export function RoutesPanel() {
  const routes = useLoad<{ routes: RouteRow[] }>('/api/routes');
  if (routes.error && !routes.data) return <ErrorLine error={routes.error} />;
  if (!routes.data) return <p class="muted" aria-busy="true">Loading the routes…</p>;
  return (
    <>
      <p class="muted">Read only here: routes are written with <code>PUT /api/routes/&#123;id&#125;</code> or the declarative file (<code>GATEWAY_CONFIG</code>).</p>
      <div class="table-wrap">
        <table aria-label="Routes">
          <thead>
            <tr><th>Route</th><th>Paths</th><th>Hosts</th><th>Upstream</th><th>Rule</th><th>Endpoint rules</th><th>Identity</th><th>Timeout</th><th>Organisation</th><th>Contract</th></tr>
          </thead>
          <tbody>
            {routes.data.routes.length === 0 && <tr><td colSpan={10} class="muted">No route yet.</td></tr>}
            {routes.data.routes.map((r) => (
              <tr key={r.id}>
                <td>{r.id}</td>
                <td>{joined(r.paths)}{r.stripPrefix && <span class="muted"> (prefix stripped)</span>}</td>
                <td>{joined(r.hosts, 'any')}</td>
                <td><code>{r.upstream}</code></td>
                <td>{r.rule === null ? <span class="badge">Open</span> : `Roles: ${joined(r.rule.roles)}`}</td>
                <td>
                  {r.endpointRules.length === 0 ? '—' : (
                    <ul class="plain">
                      {r.endpointRules.map((e) => <li key={`${e.method} ${e.path}`}><code>{e.method} {e.path}</code>: {joined(e.roles)}</li>)}
                    </ul>
                  )}
                </td>
                <td>{r.identity}</td>
                <td>{r.timeout}</td>
                <td>{r.organisation ?? '—'}</td>
                <td>{r.openapi ? 'OpenAPI deposited' : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
