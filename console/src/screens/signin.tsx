/** Sign-in (spec 1.3 rule 8): one refusal message, whatever the real reason was. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorLine } from '../components/common.tsx';
import type { Account } from '../session.ts';

export function SignIn({ onSignedIn }: { onSignedIn: (a: Account) => void }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main class="signin">
      <h1>Sign in to Meerkat</h1>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          try {
            const r = await api<{ account: Account }>('POST', '/api/session', { name, password });
            onSignedIn(r.account);
          } catch (err) {
            setError(err);
            setPassword('');
          } finally {
            setBusy(false);
          }
        }}
      >
        <label>Name<input name="name" autocomplete="username" required value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
        <label>Password<input name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} /></label>
        <button type="submit" class="primary" disabled={busy}>Sign in</button>
        <ErrorLine error={error} />
      </form>
    </main>
  );
}
