/**
 * The operators' console: the single-page application `npm run build` writes to dist/console,
 * served by the control plane on its plain and HTTPS doors. Every file is read once when the
 * plane is made; a request never touches the disk.
 *
 * Hashed files under /assets/ are kept a year (their name changes with their content); the page
 * itself is revalidated on each load, so a new build is picked up at once. Every answer carries a
 * Content-Security-Policy that allows the console's own files and nothing else: no inline script,
 * nothing fetched from another origin, no framing.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GatewayError } from '../../http/errors.ts';
import type { Exchange, OutgoingHeaders } from '../../http/exchange.ts';
import { CONSOLE_PAGES } from './console-pages.ts';

/**
 * Where `npm run build` writes the console (`dist/console`), seen from this module: from source
 * (src/planes/control/) and compiled (dist/src/planes/control/) alike, it is three folders up.
 */
export const CONSOLE_DIR = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../../dist/console/' : '../../../console/', import.meta.url));

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  // 'self' covers ws: and wss: on the same host and port (the live feeds).
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'x-frame-options': 'DENY',
} as const;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

interface Asset {
  readonly body: Buffer;
  readonly headers: OutgoingHeaders;
  readonly etag: string;
}

export interface ConsoleAssets {
  /** Whether the console was found built; without it every page answers `console.not-built`. */
  readonly built: boolean;
  /** Answers a console page or file and returns true; false when the path is none of them. */
  serve(ex: Exchange): boolean;
}

function asset(path: string, body: Buffer, immutable: boolean): Asset {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return {
    body,
    etag,
    headers: {
      ...SECURITY_HEADERS,
      'content-type': TYPES[extname(path)] ?? 'application/octet-stream',
      'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      etag,
    },
  };
}

function walk(dir: string, prefix: string, out: Map<string, Asset>): void {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    const path = `${prefix}/${name}`;
    if (statSync(full).isDirectory()) walk(full, path, out);
    else out.set(path, asset(path, readFileSync(full), path.startsWith('/assets/')));
  }
}

/** A console page: one of the application's own addresses, which all load the same document. */
function isPage(path: string): boolean {
  if (path === '/') return true;
  for (const page of CONSOLE_PAGES) if (path === page || path.startsWith(`${page}/`)) return true;
  return false;
}

export function loadConsoleAssets(dir = CONSOLE_DIR): ConsoleAssets {
  const files = new Map<string, Asset>();
  if (existsSync(join(dir, 'index.html'))) walk(dir, '', files);
  const index = files.get('/index.html');
  return {
    built: index !== undefined,
    serve(ex) {
      if (ex.method !== 'GET' && ex.method !== 'HEAD') return false;
      const page = isPage(ex.path);
      const file = page ? index : files.get(ex.path);
      if (file === undefined) {
        if (!page) return false;
        throw new GatewayError('console.not-built');
      }
      if (ex.headers['if-none-match'] === file.etag) ex.send(304, file.headers);
      else ex.send(200, file.headers, file.body);
      return true;
    },
  };
}
