import { ADMIN_SECRET_HEADER, ROLE_HEADER } from '../api/client.js';

/** A request header row of the API page; only enabled rows with a name are sent. */
export interface HeaderRow {
  enabled: boolean;
  name: string;
  value: string;
}

export type Identity = { mode: 'admin'; role: string } | { mode: 'token'; token: string };

/**
 * The headers the API page sends with every operation: the admin secret (when the server has one)
 * and the role picked, or a pasted token; then the user's own rows, which win on a clash.
 */
export function requestHeaders(identity: Identity, secret: string | undefined, rows: readonly HeaderRow[]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (identity.mode === 'admin') {
    if (secret !== undefined) headers[ADMIN_SECRET_HEADER] = secret;
    if (identity.role.trim() !== '') headers[ROLE_HEADER] = identity.role.trim();
  } else {
    const token = identity.token.trim().replace(/^bearer\s+/i, '');
    if (token !== '') headers['Authorization'] = `Bearer ${token}`;
  }
  for (const row of rows) {
    if (!row.enabled || row.name.trim() === '') continue;
    const name = row.name.trim();
    for (const existing of Object.keys(headers)) if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
    headers[name] = row.value;
  }
  return headers;
}

/** The headers as shown on the page: secrets and tokens masked. */
export function shownHeaders(headers: Record<string, string>): Array<[string, string]> {
  return Object.entries(headers).map(([name, value]) => {
    const lower = name.toLowerCase();
    if (lower === ADMIN_SECRET_HEADER.toLowerCase()) return [name, '•'.repeat(8)];
    if (lower === 'authorization') return [name, value.length > 24 ? `${value.slice(0, 16)}…${value.slice(-6)}` : value];
    return [name, value];
  });
}
