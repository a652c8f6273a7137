import { useEffect, useRef, type ReactNode } from 'react';

/**
 * A page of the console: its heading gets the focus when the page opens (a screen reader says where
 * the user is after following a link), and the tab's title follows it.
 */
export function Page({ title, actions, children, wide }: { title: string; actions?: ReactNode; children: ReactNode; wide?: boolean }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · svc-graphql console`;
    heading.current?.focus();
  }, [title]);
  return (
    <section className={`page${wide ? ' page-wide' : ''}`} aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title" ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {actions ? <div className="page-actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}
