// Builds the console into dist/console, which the control plane serves (src/planes/control/console-assets.ts).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Nothing inlined as data: or into the page: the Content-Security-Policy allows the console's own files only.
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
  },
});
