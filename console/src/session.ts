/** Who is signed in, and which organisation the screens look at. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

export interface Account {
  readonly id: string;
  readonly name: string;
  readonly capabilities: readonly string[];
  readonly roles: readonly string[];
  readonly organisation: string | null;
}

export interface Organisation {
  readonly id: string;
  readonly name: string;
}

export interface SessionValue {
  readonly account: Account;
  /** The organisation the screens filter on, or null for all the caller may see. */
  readonly organisation: string | null;
  readonly organisations: readonly Organisation[];
  setOrganisation(id: string | null): void;
  signOut(): Promise<void>;
}

export const SessionContext = createContext<SessionValue | null>(null);

export function useSession(): SessionValue {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in console');
  return s;
}
