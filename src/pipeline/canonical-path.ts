/**
 * The path routing and rules judge must be the path the upstream serves. Dot segments would let
 * `/public/../admin` match an open route and reach `/admin` behind it, so they are refused (also
 * percent-encoded). Repeated slashes are merged (as nginx does by default), so `/orders//7` meets
 * the rule written for `/orders/{id}`.
 */
import { GatewayError } from '../http/errors.ts';

function isDotSegment(segment: string): boolean {
  if (segment.length === 0 || segment.length > 6) return false;
  const plain = segment.includes('%') ? segment.replace(/%2e/gi, '.') : segment;
  return plain === '.' || plain === '..';
}

/** The path to route, or a refusal; returns `raw` itself when it is already canonical. */
export function canonicalPath(raw: string): string {
  let path = raw;
  if (path.includes('//')) path = path.replace(/\/{2,}/g, '/');
  // Fast path: no dot anywhere, nothing to check.
  if (!path.includes('.') && !/%2e/i.test(path)) return path;
  let start = 1;
  while (start <= path.length) {
    let end = path.indexOf('/', start);
    if (end < 0) end = path.length;
    if (isDotSegment(path.slice(start, end))) {
      throw new GatewayError('path.invalid', 'The request path holds a "." or ".." segment; send the path as the service names it.');
    }
    start = end + 1;
  }
  return path;
}
