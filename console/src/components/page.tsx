import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { Link } from './link';

/** A page's heading: names the tab, and takes the focus on arrival so a screen reader starts at the new page. */
export function PageTitle({ children, title }: { children: ComponentChildren; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Alert Webhooks`;
    ref.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}

export function AdminsOnly() {
  return (
    <section>
      <PageTitle title="Admins only">Admins only</PageTitle>
      <p>
        This page needs the Admin group. Your cases are in the <Link href="/cases">case inbox</Link>.
      </p>
    </section>
  );
}
