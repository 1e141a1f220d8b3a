// Runs every *.test.ts under test/ with node:test through tsx. Node 20's --test takes no globs.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const roots = process.argv.slice(2).length ? process.argv.slice(2) : ['test'];
const files = [];
const walk = (p) => {
  if (statSync(p).isDirectory()) for (const e of readdirSync(p).sort()) walk(join(p, e));
  else if (p.endsWith('.test.ts')) files.push(p);
};
roots.forEach(walk);
const db = process.env.MEERKAT_TEST_DATABASE ?? 'sqlite';

// The gateways the tests boot serve the console and run their workers, and the gateway processes
// the whole command, from the compiled tree (see siblingModule in src/workers/spawn.ts and test/helpers/process.ts):
// compiled here, from the same sources, before any test starts.
// The console's files (dist/console) are built by the same command; the browser tests load them.
const built = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

console.log(`# ${files.length} test files on ${db}`);
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=300000', ...files], {
  stdio: 'inherit',
  env: { ...process.env, MEERKAT_COMPILED: '1' },
});
process.exit(r.status ?? 1);
