/** A PEM pasted or read from a file: the file's text lands in the box, so the operator sees what is sent. */
import { useId } from 'preact/hooks';

export function PemInput(props: { label: string; value: string; onInput: (text: string) => void; required?: boolean; rows?: number; hint?: string }) {
  const id = useId();
  return (
    <div class="pem-input">
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        rows={props.rows ?? 5}
        spellcheck={false}
        required={props.required}
        placeholder="-----BEGIN …-----"
        value={props.value}
        onInput={(e) => props.onInput((e.currentTarget as HTMLTextAreaElement).value)}
      />
      <label class="inline file">
        <span class="muted">or read a file</span>
        <input
          type="file"
          aria-label={`${props.label}: file`}
          accept=".pem,.crt,.cer,.key,.csr,text/plain"
          onChange={async (e) => {
            const file = (e.currentTarget as HTMLInputElement).files?.[0];
            if (file) props.onInput(await file.text());
          }}
        />
      </label>
      {props.hint && <span class="muted hint">{props.hint}</span>}
    </div>
  );
}
