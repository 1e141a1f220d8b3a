import type { Router } from '../../http/router.ts';
import { parseVaultValue, vaultName } from '../../core/vault/vault-input.ts';
import type { VaultRecord } from '../../actors/config/messages.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { idParam, listOf, notFound, seconds, WRITE_REFUSALS } from './resource-docs.ts';

const ENTRY = {
  type: 'object',
  description: 'A vault entry as listed: never its value.',
  required: ['name', 'scope', 'readable', 'createdAt', 'updatedAt'],
  properties: {
    name: { type: 'string' }, scope: { type: 'string', description: 'app, or the organisation id' },
    readable: { type: 'boolean', description: 'false when this node\'s master key cannot unseal it (sealed under another key)' },
    createdAt: { type: 'integer' }, updatedAt: { type: 'integer' },
  },
} as const;

const entryBody = (e: VaultRecord) => ({ ...e, createdAt: seconds(e.createdAt), updatedAt: seconds(e.updatedAt) });

/** An organisation's vault is open to app-admins and to that organisation's own org-admins. */
function requireScope(principal: Principal, organisation: string | null): void {
  if (organisation !== null && principal.kind !== 'anonymous' && principal.account?.organisation === organisation
    && principal.account.capabilities.includes('org-admin')) return;
  requireCapability(principal, 'app-admin');
}

/**
 * The vault: values sealed with the master key (AES-256-GCM), written here and never read back.
 * Scheduled calls resolve `${name}` / `$name` against it at call time.
 */
export function addVaultApi(router: Router<Principal>, gw: GatewayContext): void {
  for (const scoped of [false, true]) {
    const base = scoped ? '/api/organisations/{id}/vault' : '/api/vault';
    const tags = ['vault'];
    /**
     * The vault's scope, the caller allowed in it first: whether an organisation exists is told
     * only to those who may open its vault (an org-admin's own always exists).
     */
    const scopeOf = (principal: Principal, params: Readonly<Record<string, string>>): string | null => {
      if (!scoped) {
        requireScope(principal, null);
        return null;
      }
      requireScope(principal, params.id ?? '');
      const id = idParam(params, 'organisation');
      if (!gw.config.view.organisations.has(id)) throw notFound('organisation', id);
      return id;
    };
    const scopeText = scoped ? 'the organisation\'s' : 'the application\'s';

    router.add('GET', base, {
      summary: `List ${scopeText} vault names`, tags, auth: 'session',
      responses: { 200: { description: 'names, never values', schema: listOf('entries', ENTRY) } },
    }, async (ctx) => {
      const organisation = scopeOf(ctx.principal, ctx.params);
      return { body: { entries: (await gw.config.call('vault.list', { organisation })).map(entryBody) } };
    });

    router.add('PUT', `${base}/{name}`, {
      summary: `Seal a value into ${scopeText} vault`, tags, auth: 'session',
      body: { type: 'object', required: ['value'], additionalProperties: false, properties: { value: { type: 'string', maxLength: 65536, description: 'goes out in a header: one line, no control character but a tab, Latin-1 at most' } } },
      responses: { 201: { description: 'sealed (new name)', schema: { type: 'object', required: ['name', 'scope'], properties: { name: { type: 'string' }, scope: { type: 'string', description: 'app, or the organisation id' } } } }, 204: { description: 'sealed (value replaced)' }, ...WRITE_REFUSALS },
    }, async (ctx) => {
      const organisation = scopeOf(ctx.principal, ctx.params);
      const name = vaultName(ctx.params.name ?? '');
      const value = parseVaultValue(await ctx.json());
      const { created } = await gw.config.call('vault.put', { organisation, name, value }, callerOf(gw, ctx.principal, ctx.ex));
      return created
        ? { status: 201, headers: { location: `${base.replace('{id}', organisation ?? '')}/${name}` }, body: { name, scope: organisation ?? 'app' } }
        : { status: 204 };
    });

    router.add('DELETE', `${base}/{name}`, {
      summary: `Remove a value from ${scopeText} vault`, tags, auth: 'session',
      responses: { 204: { description: 'removed' }, 404: { description: 'no such name' } },
    }, async (ctx) => {
      const organisation = scopeOf(ctx.principal, ctx.params);
      const name = vaultName(ctx.params.name ?? '');
      if (!(await gw.config.call('vault.delete', { organisation, name }, callerOf(gw, ctx.principal, ctx.ex)))) throw notFound('vault entry', name);
      return { status: 204 };
    });
  }
}
