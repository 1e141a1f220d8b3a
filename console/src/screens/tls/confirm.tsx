/** A removal asked twice, in the row itself: a slip of the mouse does not take a certificate away. */
import { useState } from 'preact/hooks';
import { ActionButton } from '../../components/common.tsx';

export function RemoveButton(props: { what: string; run: () => Promise<unknown>; onError: (err: unknown) => void }) {
  const [asking, setAsking] = useState(false);
  if (!asking) return <button type="button" class="danger" aria-label={`Remove ${props.what}`} onClick={() => setAsking(true)}>Remove</button>;
  return (
    <span class="actions" role="group" aria-label={`Remove ${props.what}?`}>
      <ActionButton label="Confirm removal" kind="danger" ariaLabel={`Confirm removal of ${props.what}`} run={props.run} onError={(err) => { props.onError(err); setAsking(false); }} />
      <button type="button" onClick={() => setAsking(false)}>Cancel</button>
    </span>
  );
}
