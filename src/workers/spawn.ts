import { existsSync } from 'node:fs';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker on a module URL. Production runs compiled `.js`; under tsx (tests, `npm run
 * dev`) the module is `.ts`, which Node 20 cannot load in a Worker directly, so a two-line
 * bootstrap registers tsx inside the worker first.
 */
export function spawnWorker(module: URL, options: WorkerOptions): Worker {
  const execArgv = WORKER_EXEC_ARGV && [...WORKER_EXEC_ARGV];
  if (!module.pathname.endsWith('.ts')) return new Worker(module, { execArgv, ...options });
  const tsx = import.meta.resolve('tsx/esm/api');
  const source = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(module.href)}); });`;
  return new Worker(source, { execArgv, ...options, eval: true });
}

/**
 * A worker inherits the process's flags: a gateway started with `--import tsx` would preload tsx
 * in every worker and send each module it imports through tsx's hooks (a third of a second
 * and more per worker) for a compiled module that needs none of it.
 */
function withoutTsx(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if ((a === '--import' || a === '--loader' || a === '--require' || a === '-r') && /(^|\/)tsx(\/|$)/.test(argv[i + 1] ?? '')) { i++; continue; }
    if (/^--(import|loader|require)=.*tsx/.test(a)) continue;
    out.push(a);
  }
  return out;
}

/**
 * The flags every worker starts with: the process's own, tsx left out (they do not change while
 * it runs). Undefined when there is nothing to leave out: a worker then inherits the process's
 * flags the way Node does it, which skips the V8 ones (`--max-old-space-size`, `--expose-gc`…)
 * that apply to the whole process and that a worker refuses when they are passed to it (it would
 * not start).
 */
export const WORKER_EXEC_ARGV: readonly string[] | undefined = (() => {
  const kept = withoutTsx(process.execArgv);
  return kept.length === process.execArgv.length ? undefined : kept;
})();

const PACKAGE_ROOT = new URL('../../', import.meta.url).href;

/**
 * The sibling module of `from` with the same extension as `from` (`.ts` under tsx, `.js` compiled).
 *
 * MEERKAT_COMPILED=1 says the compiled tree (`dist/`, made by `npm run build`) is as new as the
 * sources: a gateway running from source then starts its workers from it. Loading a worker through
 * tsx costs about a quarter of a second of CPU more, which the test runner (test/run.mjs builds
 * first, then sets it) would otherwise pay on each of the seven workers of every gateway it boots.
 */
export function siblingModule(from: string, relative: string): URL {
  const ext = from.endsWith('.ts') ? '.ts' : '.js';
  const module = new URL(relative.replace(/\.(ts|js)$/, '') + ext, from);
  if (ext === '.js' || process.env.MEERKAT_COMPILED !== '1' || !module.href.startsWith(PACKAGE_ROOT)) return module;
  const compiled = new URL(`dist/${module.href.slice(PACKAGE_ROOT.length).replace(/\.ts$/, '.js')}`, PACKAGE_ROOT);
  if (!existsSync(compiled)) throw new Error(`MEERKAT_COMPILED=1 but ${compiled.pathname} does not exist: run npm run build first`);
  return compiled;
}
