import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { User } from './types';

export interface Session {
  user: User;
  admin: boolean;
}

export const SessionContext = createContext<Session | null>(null);

/** The signed-in user: pages below the sign-in gate always have one. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}
