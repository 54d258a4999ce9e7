// Root layout: header, skip link, providers. System fonts only (no next/font: builds run offline).
import type { Metadata, Viewport } from 'next';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { Providers } from './providers';
// uPlot's own stylesheet (chart layout); imported here because Next takes global CSS from the layout.
import 'uplot/dist/uPlot.min.css';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'Plugboard', template: '%s · Plugboard' },
  description:
    'Kubernetes device plugins: per-device capacity, allocation, NUMA placement and simulated faults',
};

export const viewport: Viewport = {
  colorScheme: 'light dark',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="site-header">
          <Link className="brand" href="/">
            Plugboard
          </Link>
          <nav aria-label="Main">
            <Link href="/">Cluster overview</Link>
            <Link href="/migration">Migration to DRA</Link>
          </nav>
        </header>
        <Providers>
          <main id="main">{children}</main>
        </Providers>
      </body>
    </html>
  );
}
