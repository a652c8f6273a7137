import type { ReactNode } from 'react';

/**
 * A table of the console: its caption (for screen readers), a heading per column, and, with
 * `actions`, a last column of buttons whose heading only screen readers hear. `children` are the rows.
 */
export function Table({ caption, columns, actions, children }: { caption: string; columns: readonly string[]; actions?: boolean; children: ReactNode }) {
  return (
    <table className="table">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col" key={column}>
              {column}
            </th>
          ))}
          {actions ? (
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
