/** A signed-in root console session, for tests that configure the gateway through its API. */
import { call, signIn, type Answer } from './http.ts';
import { ROOT_PASSWORD } from './gateway.ts';

export interface Admin {
  readonly control: string;
  readonly headers: Record<string, string>;
  get(path: string): Promise<Answer>;
  put(path: string, body: unknown): Promise<Answer>;
  post(path: string, body: unknown): Promise<Answer>;
  patch(path: string, body: unknown): Promise<Answer>;
  del(path: string): Promise<Answer>;
}

export function adminWith(control: string, headers: Record<string, string>): Admin {
  const go = (method: string) => (path: string, body?: unknown) => call(`${control}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  return { control, headers, get: go('GET'), put: go('PUT'), post: go('POST'), patch: go('PATCH'), del: go('DELETE') };
}

export async function signInAdmin(control: string, name = 'root', password = ROOT_PASSWORD): Promise<Admin> {
  const cookie = await signIn(control, name, password);
  return adminWith(control, { cookie, origin: control });
}

/** A PUT that must succeed (created or replaced). */
export async function putOk(admin: Admin, path: string, body: unknown): Promise<Answer> {
  const a = await admin.put(path, body);
  if (a.status !== 200 && a.status !== 201) throw new Error(`PUT ${path}: ${a.status} ${a.text}`);
  return a;
}

/** An account (password `<name>-password-1`) and a personal token to call the data plane as it. */
export async function personWithToken(admin: Admin, name: string, roles: string[], organisation?: string): Promise<{ id: string; token: string }> {
  const a = await admin.post('/api/accounts', { name, password: `${name}-password-1`, roles, ...(organisation ? { organisation } : {}) });
  if (a.status !== 201) throw new Error(`account ${name}: ${a.status} ${a.text}`);
  const t = await admin.post('/api/tokens', { name: `${name}-app`, kind: 'personal', account: name });
  if (t.status !== 201) throw new Error(`token of ${name}: ${t.status} ${t.text}`);
  return { id: a.json.id, token: t.json.token };
}
