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
console.log(`# ${files.length} test files on ${db}`);
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=300000', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
