/** The fields the certificate forms of this screen share. */
import { Field } from '../../components/field.tsx';

/** What each way of obtaining a certificate is given: the POST /api/certificates it makes. */
export interface FormProps {
  readonly create: (body: Record<string, unknown>) => Promise<void>;
}

export function NameField({ value, onInput }: { value: string; onInput: (v: string) => void }) {
  return (
    <Field label="Name (optional)">
      <input value={value} maxLength={100} onInput={(e) => onInput((e.currentTarget as HTMLInputElement).value)} />
    </Field>
  );
}

export function NamesField({ value, onInput, label = 'Names', hint }: { value: string; onInput: (v: string) => void; label?: string; hint?: string }) {
  return (
    <Field grow label={label} hint={hint ?? 'Host names, one-label wildcards (*.example.com) or IP addresses, separated by spaces or commas.'}>
      <input value={value} placeholder="console.example.com app.example.com 10.0.0.7" onInput={(e) => onInput((e.currentTarget as HTMLInputElement).value)} />
    </Field>
  );
}
