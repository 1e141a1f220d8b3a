/**
 * The ways to obtain a certificate this node offers (spec 1.2 rule 2): import, self-signed,
 * signing request, from the file system mounts, and an ACME order when an authority is set up.
 * The cluster certificate controller is not offered: the gateway does not run one (docs/tls.md).
 */
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ActionButton, ErrorLine, Notice } from '../../components/common.tsx';
import { AcmeOrderForm } from './acme-order.tsx';
import { Field } from '../../components/field.tsx';
import { NameField, NamesField, type FormProps } from './field.tsx';
import { FileForm } from './from-files.tsx';
import { PemInput } from './pem-input.tsx';
import { splitNames, type Acme, type Certificate } from './types.ts';

type Way = 'import' | 'self-signed' | 'csr' | 'file' | 'acme';

const WAYS: ReadonlyArray<[Way, string]> = [
  ['import', 'Import a certificate and its key'],
  ['self-signed', 'Self-signed'],
  ['csr', 'Signing request (an authority signs it)'],
  ['file', 'From the file system'],
  ['acme', 'Ask an ACME authority'],
];

function ImportForm({ create }: FormProps) {
  const [name, setName] = useState('');
  const [cert, setCert] = useState('');
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <form onSubmit={(e) => e.preventDefault()} aria-label="Import">
      <div class="filters"><NameField value={name} onInput={setName} /></div>
      <div class="pem-pair">
        <PemInput label="Certificate" value={cert} onInput={setCert} required hint="The leaf first, then its chain." />
        <PemInput label="Private key" value={key} onInput={setKey} required hint="Without a passphrase. It is sealed with the vault master key and never shown again." />
      </div>
      <div class="actions">
        <ActionButton label="Import" kind="primary" onError={setError} disabled={cert.trim() === '' || key.trim() === ''} run={async () => {
          await create({ source: 'import', ...(name.trim() ? { name: name.trim() } : {}), cert, key });
          setCert('');
          setKey('');
          setName('');
        }} />
      </div>
      <ErrorLine error={error} />
    </form>
  );
}

function SelfSignedForm({ create }: FormProps) {
  const [name, setName] = useState('');
  const [names, setNames] = useState('');
  const [days, setDays] = useState('365');
  const [error, setError] = useState<unknown>(null);
  return (
    <form onSubmit={(e) => e.preventDefault()} aria-label="Self-signed">
      <div class="filters">
        <NameField value={name} onInput={setName} />
        <NamesField value={names} onInput={setNames} />
        <Field label="Valid for (days)">
          <input type="number" min={1} max={3650} value={days} onInput={(e) => setDays((e.currentTarget as HTMLInputElement).value)} />
        </Field>
      </div>
      <p class="muted">Browsers warn about a self-signed certificate; for a machine of your own, see the local machine assistant below.</p>
      <div class="actions">
        <ActionButton label="Create the certificate" kind="primary" onError={setError} disabled={splitNames(names).length === 0} run={async () => {
          await create({ source: 'self-signed', ...(name.trim() ? { name: name.trim() } : {}), names: splitNames(names), days: Number(days) });
          setNames('');
          setName('');
        }} />
      </div>
      <ErrorLine error={error} />
    </form>
  );
}

const SUBJECT_FIELDS: ReadonlyArray<[string, string]> = [['organisation', 'Organisation'], ['unit', 'Unit'], ['locality', 'Locality'], ['state', 'State'], ['country', 'Country (two letters)'], ['email', 'E-mail']];

function CsrForm({ create }: FormProps) {
  const [name, setName] = useState('');
  const [names, setNames] = useState('');
  const [subject, setSubject] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  return (
    <form onSubmit={(e) => e.preventDefault()} aria-label="Signing request">
      <div class="filters">
        <NameField value={name} onInput={setName} />
        <NamesField value={names} onInput={setNames} />
      </div>
      <div class="filters">
        {SUBJECT_FIELDS.map(([field, label]) => (
          <Field label={label}>
            <input value={subject[field] ?? ''} onInput={(e) => setSubject({ ...subject, [field]: (e.currentTarget as HTMLInputElement).value })} />
          </Field>
        ))}
      </div>
      <p class="muted">The gateway makes the key and the request; the key never leaves it. The request is listed as pending: download it, have your authority sign it, then adopt the answer on its row.</p>
      <div class="actions">
        <ActionButton label="Make the signing request" kind="primary" onError={setError} disabled={splitNames(names).length === 0} run={async () => {
          const given = Object.fromEntries(Object.entries(subject).map(([k, v]) => [k, v.trim()]).filter(([, v]) => v !== ''));
          await create({ source: 'csr', ...(name.trim() ? { name: name.trim() } : {}), names: splitNames(names), ...(Object.keys(given).length ? { subject: given } : {}) });
          setNames('');
          setName('');
          setSubject({});
        }} />
      </div>
      <ErrorLine error={error} />
    </form>
  );
}

export function ObtainCertificate(props: { acme: Acme | null; refresh: () => Promise<void> }) {
  const [way, setWay] = useState<Way>('self-signed');
  const [created, setCreated] = useState<Certificate | null>(null);
  // ACME is offered where the edition allows it; the community edition's sentence says why not.
  const ways = WAYS.filter(([w]) => w !== 'acme' || (props.acme !== null && 'authorities' in props.acme));
  const create = async (body: Record<string, unknown>) => {
    setCreated(null);
    const c = await api<Certificate>('POST', '/api/certificates', body);
    setCreated(c);
    await props.refresh();
  };
  return (
    <div class="panel">
      <div class="filters">
        <Field label="Way to obtain it">
          <select value={way} onChange={(e) => { setWay((e.currentTarget as HTMLSelectElement).value as Way); setCreated(null); }}>
            {ways.map(([w, label]) => <option value={w}>{label}</option>)}
          </select>
        </Field>
      </div>
      {way === 'import' && <ImportForm create={create} />}
      {way === 'self-signed' && <SelfSignedForm create={create} />}
      {way === 'csr' && <CsrForm create={create} />}
      {way === 'file' && <FileForm create={create} />}
      {way === 'acme' && props.acme && <AcmeOrderForm create={create} acme={props.acme} />}
      {created && (
        <Notice>
          {created.state === 'pending'
            ? `“${created.name}” is pending: download its request from the list above.`
            : `“${created.name}” is held. Tick the planes it should serve in the list above.`}
        </Notice>
      )}
    </div>
  );
}
