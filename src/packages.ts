/**
 * CommonJS packages loaded with `require`. Imported from an ES module, a CommonJS package is first
 * read by Node's export lexer, file by file along its re-exports, to name its exports: for
 * MikroORM about 150 ms of every thread that opens the store (five actors and the boot's task at
 * each start), spent on names the code reads off the module object anyway. `require` loads the same
 * files without it. Types still come from `import type`.
 */
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/** `name` as `require` gives it; `T` is `typeof import(name)`. */
export function loadPackage<T>(name: string): T {
  return load(name) as T;
}
