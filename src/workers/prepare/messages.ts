import type { StoreOptions } from '../../store/orm.ts';

/** What the boot worker needs: plain data, so it crosses the thread boundary. */
export interface PrepareInput {
  readonly store: StoreOptions;
  /** GATEWAY_ROOT_PASSWORD, when set: the first start gives it to root. */
  readonly rootPassword: string | undefined;
  readonly now: number;
}

export interface PrepareResult {
  /** Migrations applied now, by name. */
  readonly applied: string[];
  readonly rootCreated: boolean;
  /** Shown once by the caller when root was created without a given password; never stored. */
  readonly generatedPassword?: string;
}

export type PrepareReply =
  | { readonly ok: true; readonly result: PrepareResult }
  /** `newer`: the database holds migrations this build does not know (store/schema-guard.ts). */
  /** `refused`: PostgreSQL refused the database the URL names (store/orm.ts, DatabaseRefusedError). */
  | { readonly ok: false; readonly message: string; readonly newer?: boolean; readonly refused?: boolean };
