/**
 * The piscina pool for stateless CPU work (password hashing today). Actors own state; the pool
 * owns none, so any of its threads can take any task.
 */
import { Piscina } from 'piscina';
import type { Logger } from '../log/logger.ts';
import { siblingModule, WORKER_EXEC_ARGV } from './spawn.ts';
import type { PasswordTask } from './tasks/password.ts';

export interface TaskPool {
  hashPassword(password: string): Promise<string>;
  verifyPassword(password: string, hash: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The task module's URL; from source, wrapped by tsx-entry.mjs (see there why). */
function taskModule(relative: string): { filename: string; workerData?: { module: string } } {
  const module = siblingModule(import.meta.url, relative);
  if (!module.pathname.endsWith('.ts')) return { filename: module.href };
  return { filename: new URL('./tasks/tsx-entry.mjs', import.meta.url).href, workerData: { module: module.href } };
}

export function createTaskPool(log: Logger, maxThreads = 2): TaskPool {
  const pool = new Piscina({
    ...taskModule('./tasks/password.ts'),
    execArgv: WORKER_EXEC_ARGV && [...WORKER_EXEC_ARGV],
    minThreads: 0,
    maxThreads,
    idleTimeout: 30_000,
  });
  // Without a listener, a task worker that fails to load would crash the process.
  pool.on('error', (err: unknown) => log.error('task pool worker failed', { error: String(err) }));
  return {
    hashPassword: (password) => pool.run({ op: 'hash', password } satisfies PasswordTask) as Promise<string>,
    verifyPassword: (password, hash) => pool.run({ op: 'verify', password, hash } satisfies PasswordTask) as Promise<boolean>,
    close: () => pool.destroy(),
  };
}
