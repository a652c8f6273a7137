import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** Where the server serves the console; every route of the page lives under it. */
export const BASE_PATH = '/console';

const NAVIGATE_EVENT = 'svc-graphql-console:navigate';

function subscribe(onChange: () => void): () => void {
  window.addEventListener('popstate', onChange);
  window.addEventListener(NAVIGATE_EVENT, onChange);
  return () => {
    window.removeEventListener('popstate', onChange);
    window.removeEventListener(NAVIGATE_EVENT, onChange);
  };
}

function currentPath(): string {
  const { pathname } = window.location;
  const path = pathname.startsWith(BASE_PATH) ? pathname.slice(BASE_PATH.length) : pathname;
  return path === '' ? '/' : path;
}

/** The path of the page within the console (`/remote-schemas/add`). */
export function usePath(): string {
  return useSyncExternalStore(subscribe, currentPath);
}

/** Goes to a path within the console, as a link would. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE_PATH}${to}`;
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new Event(NAVIGATE_EVENT));
}

/** The path's parts, decoded: `/permissions/a%20b/user` → `['permissions', 'a b', 'user']`. */
export function pathParts(path: string): string[] {
  return path
    .split('/')
    .filter((part) => part !== '')
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
}

/** A path from parts, each encoded. */
export function pathOf(...parts: string[]): string {
  return `/${parts.map(encodeURIComponent).join('/')}`;
}

interface LinkProps extends Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> {
  to: string;
}

/** A link within the console: a real `<a href>` (opens in a new tab too), followed without reloading the page. */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  const current = usePath() === to;
  return <a href={`${BASE_PATH}${to}`} onClick={follow} aria-current={current ? 'page' : undefined} {...rest} />;
}
