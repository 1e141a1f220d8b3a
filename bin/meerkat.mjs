#!/usr/bin/env node
// The `meerkat` command: runs the compiled gateway (npm run build), or the sources through tsx
// when no build exists (a development checkout).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/src/cli.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli.ts', import.meta.url).href);
}
