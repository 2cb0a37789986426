import type { ComponentChildren } from 'preact';
import { navigate } from '../router';

/** An ordinary link that the router follows without reloading (a modified click opens a tab as usual). */
export function Link({ href, children, ...rest }: { href: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' | undefined }) {
  return (
    <a
      href={href}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
      {...rest}
    >
      {children}
    </a>
  );
}
