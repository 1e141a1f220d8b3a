import { existsSync, readFileSync } from 'node:fs';

/** The package version, read once: from source it is one folder up, compiled two. */
function readVersion(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    const url = new URL(rel, import.meta.url);
    if (!existsSync(url)) continue;
    const pkg = JSON.parse(readFileSync(url, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'meerkat' && pkg.version) return pkg.version;
  }
  return '0.0.0';
}

export const VERSION = readVersion();
