import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConsoleAssets } from '../../src/planes/control/console-assets.ts';
import { GatewayError } from '../../src/http/errors.ts';
import type { Exchange } from '../../src/http/exchange.ts';

test('a node whose console is not built answers its pages with console.not-built and leaves other paths to the API', () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-'));
  try {
    const assets = loadConsoleAssets(dir);
    assert.equal(assets.built, false);
    const ex = (path: string) => ({ method: 'GET', path, headers: {} }) as unknown as Exchange;
    assert.throws(() => assets.serve(ex('/')), (e: unknown) => e instanceof GatewayError && e.code === 'console.not-built' && e.status === 503);
    assert.throws(() => assets.serve(ex('/data-plane/metrics')), (e: unknown) => e instanceof GatewayError && e.code === 'console.not-built');
    assert.equal(assets.serve(ex('/api/routes')), false);
    assert.equal(assets.serve(ex('/assets/x.js')), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
