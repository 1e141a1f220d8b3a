/** An ACME order (docs/tls-acme.md): a certificate named Ask <authority>, asked once placed. */
import { useState } from 'preact/hooks';
import { ActionButton, ErrorLine, Notice } from '../../components/common.tsx';
import { Field } from '../../components/field.tsx';
import { NamesField, type FormProps } from './field.tsx';
import { splitNames, type Acme } from './types.ts';

export function AcmeOrderForm({ create, acme }: FormProps & { acme: Acme }) {
  const authorities = 'authorities' in acme ? acme.authorities : [];
  const [authority, setAuthority] = useState(authorities[0]?.id ?? '');
  const [names, setNames] = useState('');
  const [error, setError] = useState<unknown>(null);
  if ('refused' in acme) return <Notice>{acme.refused}</Notice>;
  if (authorities.length === 0) return <Notice>No ACME authority is set up yet: add one under ACME authorities below.</Notice>;
  const chosen = authorities.find((a) => a.id === authority) ?? authorities[0]!;
  return (
    <form onSubmit={(e) => e.preventDefault()} aria-label="ACME order">
      <div class="filters">
        <Field label="Authority">
          <select value={chosen.id} onChange={(e) => setAuthority((e.currentTarget as HTMLSelectElement).value)}>
            {authorities.map((a) => <option value={a.id}>{a.name}</option>)}
          </select>
        </Field>
        <NamesField value={names} onInput={setNames} label="Names (full host names)" hint="Full host names only: an authority proves a wildcard over DNS-01 only, which the gateway does not answer, and no IP address." />
      </div>
      <p class="muted">The order is named “Ask {chosen.name}”. Nothing is sent until it is placed on the console or the application; the authority validates over HTTP on port 80 of each name.{!chosen.termsAccepted && ' This authority\'s terms are not accepted yet: no order can be made for it.'}</p>
      <div class="actions">
        <ActionButton label="Order" kind="primary" onError={setError} disabled={splitNames(names).length === 0} run={async () => {
          await create({ source: 'acme', authority: chosen.id, names: splitNames(names) });
          setNames('');
        }} />
      </div>
      <ErrorLine error={error} />
    </form>
  );
}
