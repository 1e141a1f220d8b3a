/**
 * A labelled control the forms share. The hint stays out of the label and is tied with
 * aria-describedby, so the control's name is the label's words alone.
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
