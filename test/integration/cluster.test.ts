import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, TEST_DATABASE } from '../helpers/db.ts';
import { loopbackEnv } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { startProcess } from '../helpers/process.ts';

function dbEnv(db: { dataDir: string; databaseUrl: string | undefined }): Record<string, string> {
  return { GATEWAY_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { GATEWAY_DATABASE_URL: db.databaseUrl } : {}) };
}

// Several nodes on one database is the PostgreSQL (cluster) mode; the SQLite file serves one node.
if (TEST_DATABASE === 'postgres') {
  test('cluster mode: three nodes starting together on an empty database migrate once and all serve', async () => {
    const db = await createTestDatabase();
    try {
      const env = loopbackEnv(dbEnv(db));
      delete (env as Record<string, string | undefined>).GATEWAY_ROOT_PASSWORD;
      const nodes = await Promise.all([1, 2, 3].map((n) => startProcess({ ...env, GATEWAY_NODE_NAME: `node-${n}` })));
      for (const node of nodes) {
        const r = await call(`${node.urls.control}/readyz`);
        assert.equal(r.status, 200, r.text);
      }
      const migrated = nodes.filter((n) => /"msg":"database migrated"/.test(n.stderr()));
      assert.equal(migrated.length, 1, 'exactly one node applied the migrations');
      // One root: exactly one node generated (and printed) its password.
      const printed = nodes.filter((n) => /the account "root" was created/.test(n.stderr()));
      assert.equal(printed.length, 1);
      for (const node of nodes) node.child.kill('SIGTERM');
      for (const node of nodes) assert.equal(await node.exited, 0);
    } finally {
      await db.drop();
    }
  });
}
