/**
 * The console's screens, their addresses and who may open them. The control plane serves the
 * application at each address (src/planes/control/console-pages.ts holds the same list); the
 * API still decides: a screen opened without the capability shows the API's refusal.
 */
export type Capability = 'root' | 'infra-admin' | 'app-admin' | 'gateway-admin' | 'org-admin';

export interface PageDef {
  readonly path: string;
  readonly name: string;
  /** Any one of these opens the screen (root holds every capability). */
  readonly capabilities: readonly Capability[];
}

export const PAGES: readonly PageDef[] = [
  { path: '/scheduler', name: 'Scheduler', capabilities: ['app-admin'] },
  { path: '/tls', name: 'TLS', capabilities: ['infra-admin'] },
  { path: '/audit', name: 'Audit', capabilities: ['infra-admin', 'app-admin', 'org-admin'] },
  { path: '/logs', name: 'Logs', capabilities: ['infra-admin'] },
  { path: '/data-plane/metrics', name: 'Metrics', capabilities: ['gateway-admin'] },
  { path: '/access', name: 'Access', capabilities: ['infra-admin', 'app-admin'] },
];

export function allowed(page: PageDef, held: readonly string[]): boolean {
  return held.includes('root') || page.capabilities.some((c) => held.includes(c));
}

export function holds(held: readonly string[], ...any: Capability[]): boolean {
  return held.includes('root') || any.some((c) => held.includes(c));
}
