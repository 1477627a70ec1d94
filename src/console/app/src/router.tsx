// A small history router: the console's pages live at /console/<page>[/<id>], so a page can be
// bookmarked or reloaded (the gateway answers the app's page for any path below /console/).
import { useEffect, useState, type MouseEvent, type ReactNode } from 'react';

export const BASE = '/console';

function current(): string {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '/';
  return path === '' ? '/' : path;
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((l) => l()));

export function navigate(path: string, replace = false): void {
  const url = `${BASE}${path}`;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  listeners.forEach((l) => l());
}

/** The path below /console ("/runs/123"), updated on navigation. */
export function usePath(): string {
  const [path, setPath] = useState(current);
  useEffect(() => {
    const listener = () => setPath(current());
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return path;
}

export function Link(props: { to: string; children: ReactNode; className?: string; 'aria-current'?: 'page' }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(props.to);
  };
  return (
    <a href={`${BASE}${props.to}`} onClick={onClick} className={props.className} aria-current={props['aria-current']}>
      {props.children}
    </a>
  );
}
