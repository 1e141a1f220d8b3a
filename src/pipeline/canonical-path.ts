/** The path routing and rules judge must be the path the upstream serves (see http/canonical-path.ts). */
import { canonicalForm, NOT_CANONICAL } from '../http/canonical-path.ts';
import { GatewayError } from '../http/errors.ts';

/** The path to route, or a refusal; returns `raw` itself when it is already canonical. */
export function canonicalPath(raw: string): string {
  const path = canonicalForm(raw);
  if (path === undefined) {
    throw new GatewayError('path.invalid', `The request path holds ${NOT_CANONICAL}: services read such a path in more than one way; send the path as the service names it.`);
  }
  return path;
}
