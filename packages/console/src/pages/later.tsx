import { Page } from '../components/page.js';

/** A page whose metadata calls the console does not drive yet: says so, and what to use meanwhile. */
export function LaterPage({ title, what, calls }: { title: string; what: string; calls: readonly string[] }) {
  return (
    <Page title={title}>
      <p>{what}</p>
      <p>
        This version of the console does not edit them yet. Until it does, use the metadata API (<code>POST /v1/metadata</code>) with{' '}
        {calls.map((call, index) => (
          <span key={call}>
            {index > 0 ? ', ' : ''}
            <code>{call}</code>
          </span>
        ))}
        ; they are exported and imported with the rest of the metadata on the Metadata page.
      </p>
    </Page>
  );
}
