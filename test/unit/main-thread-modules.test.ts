/**
 * The main thread serves the doors and never loads the ORM (about 50 MB a thread): migrations run
 * in the boot worker and the store in the actors. Checked on the real entry point with a module
 * hook that reports every `@mikro-orm` import or require.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
// Both ways a module is loaded: an ES import (a resolve hook) and `require` (the store loads
// MikroORM's CommonJS packages so, src/store/packages.ts), which module hooks do not see on Node 20.
const HOOK = `import Module, { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent("export async function resolve(s, c, n) { if (s.startsWith('@mikro-orm/')) console.error('ORM-IMPORT ' + s); return n(s, c); }"));
const load = Module._load;
Module._load = function (request, ...rest) {
  if (typeof request === 'string' && request.startsWith('@mikro-orm/')) console.error('ORM-IMPORT ' + request);
  return load.call(this, request, ...rest);
};`;

function ormImports(args: string[], env: Record<string, string> = {}): string[] {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(HOOK)}`, CLI, ...args], {
    encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env },
  });
  return r.stderr.split('\n').filter((l) => l.startsWith('ORM-IMPORT ')).map((l) => l.slice('ORM-IMPORT '.length));
}

test('the gateway entry point and everything it imports load no ORM module on the main thread', () => {
  assert.deepEqual(ormImports(['version']), []);
});

test('the hook sees ORM imports: a one-off command that opens the store loads it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'meerkat-modules-'));
  try {
    const seen = ormImports(['migrate'], { GATEWAY_DATA_DIR: dir });
    assert.ok(seen.includes('@mikro-orm/libsql'), `seen: ${seen.join(', ')}`);
    assert.ok(seen.includes('@mikro-orm/migrations'), `seen: ${seen.join(', ')}`);
    assert.ok(!seen.includes('@mikro-orm/postgresql'), 'only the driver in use is loaded');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
