'use client';
// The operator's bearer token for gateways that require auth for mutations.
import { useState } from 'react';
import { useToken } from '../../lib/token';

export function TokenForm() {
  const [token, setToken] = useToken();
  const [draft, setDraft] = useState('');
  if (token) {
    return (
      <p className="row">
        <span className="badge ok">✓ bearer token set for this tab</span>
        <button type="button" onClick={() => setToken(null)}>
          Forget token
        </button>
      </p>
    );
  }
  return (
    <form
      className="row"
      onSubmit={(e) => {
        e.preventDefault();
        if (draft.trim()) setToken(draft.trim());
        setDraft('');
      }}
    >
      <label>
        Bearer token
        <input type="password" autoComplete="off" value={draft} onChange={(e) => setDraft(e.target.value)} />
      </label>
      <button type="submit">Use token</button>
      <span className="muted">Kept in this tab only and sent to the gateway with each fault request.</span>
    </form>
  );
}
