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
