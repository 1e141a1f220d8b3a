// Runs every *.test.ts under test/ with node:test through tsx. Node 20's --test takes no globs.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
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
// type-checked and compiled here, from the same sources, before any test starts.
// The console's files (dist/console) are built by the same command; the browser tests load them.
// A second run on the same sources and the same compiled tree (CI's PostgreSQL pass after the
// SQLite one) skips both: the stamp names the inputs' digest and the compiled files as written.
const stamp = join('node_modules', '.cache', 'meerkat-checked');
const inputs = digestOf(['src', 'console', 'test', 'bench', 'bin', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']);
const previous = existsSync(stamp) ? readFileSync(stamp, 'utf8') : '';
if (previous !== `${inputs} ${treeOf('dist')}`) {
  for (const script of ['typecheck', 'build']) {
    const done = spawnSync('npm', ['run', '--silent', script], { stdio: 'inherit' });
    if (done.status !== 0) process.exit(done.status ?? 1);
  }
  mkdirSync(dirname(stamp), { recursive: true });
  writeFileSync(stamp, `${inputs} ${treeOf('dist')}`);
} else {
  console.log('# type-checked and compiled already from these sources');
}

console.log(`# ${files.length} test files on ${db}`);
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=300000', ...files], {
  stdio: 'inherit',
  env: { ...process.env, MEERKAT_COMPILED: '1' },
});
process.exit(r.status ?? 1);

/** Every file under `roots`, in a stable order, leaving out what runs and tests write. */
function* filesOf(roots) {
  for (const p of roots) {
    if (!existsSync(p)) continue;
    if (statSync(p).isDirectory()) {
      yield* filesOf(readdirSync(p).sort().filter((e) => !['node_modules', '.runs', '.artifacts', '.tmp'].includes(e)).map((e) => join(p, e)));
    } else yield p;
  }
}

/** SHA-256 over the paths and contents of every file under `roots`. */
function digestOf(roots) {
  const hash = createHash('sha256');
  for (const p of filesOf(roots)) hash.update(`${p}\0`).update(readFileSync(p)).update('\0');
  return hash.digest('hex');
}

/** The compiled tree as written: each file's path, size and modification time. */
function treeOf(root) {
  const hash = createHash('sha256');
  for (const p of filesOf([root])) {
    const s = statSync(p);
    hash.update(`${p} ${s.size} ${s.mtimeMs}\n`);
  }
  return hash.digest('hex');
}
