/**
 * The declared endpoints of a route (spec 1.5 rule 3): the operations of its deposited OpenAPI
 * document and the templates of its endpoint rules. The access log names a call's endpoint with
 * them when the route declares one; the metrics use them before deducing a template. Pure.
 */
import type { EndpointRuleView } from '../model.ts';
import { OPENAPI_METHODS, pathsOf } from '../audit/rules.ts';
import { TemplateIndex, type Templated } from './template-index.ts';

/** Templates a route may declare at most: a document past this keeps its first ones. */
export const DECLARED_MAX = 2_000;

export function declaredEndpoints(openapi: unknown, rules: readonly EndpointRuleView[]): Templated[] {
  const out: Templated[] = [];
  const seen = new Set<string>();
  const add = (method: string, template: string) => {
    const key = `${method} ${template}`;
    if (out.length >= DECLARED_MAX || seen.has(key) || !template.startsWith('/')) return;
    seen.add(key);
    out.push({ method, template });
  };
  for (const [template, item] of Object.entries(pathsOf(openapi) ?? {})) {
    if (typeof item !== 'object' || item === null) continue;
    for (const m of OPENAPI_METHODS) if (Object.hasOwn(item, m)) add(m.toUpperCase(), template);
  }
  for (const rule of rules) add(rule.method, rule.path);
  return out;
}

/** The route's declared endpoints compiled, or undefined when it declares none. */
export function endpointIndex(endpoints: readonly Templated[]): TemplateIndex<Templated> | undefined {
  return endpoints.length === 0 ? undefined : new TemplateIndex(endpoints);
}

/** The endpoint label of a call: its method and the template, `GET /orders/{id}`. */
export function endpointLabel(method: string, index: TemplateIndex<Templated> | undefined, servicePath: string): string | null {
  // A HEAD is the GET without its body (RFC 9110 9.3.2): labelled by the GET's template. Endpoint
  // audit keeps its own rule (a HEAD is its own operation there).
  const m = index?.match(method, servicePath) ?? (method === 'HEAD' ? index?.match('GET', servicePath) : undefined);
  return m === undefined ? null : `${method} ${m.value.template}`;
}
