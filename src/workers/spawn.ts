import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker on a module URL. Production runs compiled `.js`; under tsx (tests, `npm run
 * dev`) the module is `.ts`, which Node 20 cannot load in a Worker directly, so a two-line
 * bootstrap registers tsx inside the worker first.
 */
export function spawnWorker(module: URL, options: WorkerOptions): Worker {
  if (!module.pathname.endsWith('.ts')) return new Worker(module, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const source = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(module.href)}); });`;
  return new Worker(source, { ...options, eval: true });
}

/** The sibling module of `from` with the same extension as `from` (`.ts` under tsx, `.js` compiled). */
export function siblingModule(from: string, relative: string): URL {
  const ext = from.endsWith('.ts') ? '.ts' : '.js';
  return new URL(relative.replace(/\.(ts|js)$/, '') + ext, from);
}
