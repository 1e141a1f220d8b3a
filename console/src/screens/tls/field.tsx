/**
 * The fields the forms of this screen share. A labelled control keeps its hint out of the label
 * and ties it with aria-describedby, so the control's name is the label's words alone.
 */
import { cloneElement, type ComponentChildren, type VNode } from 'preact';
import { useId } from 'preact/hooks';

export function Field(props: { label: ComponentChildren; hint?: ComponentChildren; grow?: boolean; children: VNode<Record<string, unknown>> }) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div class={props.grow ? 'field grow' : 'field'}>
      <label for={id}>{props.label}</label>
      {cloneElement(props.children, { id, ...(props.hint ? { 'aria-describedby': hintId } : {}) })}
      {props.hint && <span class="muted hint" id={hintId}>{props.hint}</span>}
    </div>
  );
}

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
