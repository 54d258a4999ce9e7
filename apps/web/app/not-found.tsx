// 404 page that says why and where to go.
import Link from 'next/link';

export default function NotFound() {
  return (
    <div className="notice info empty">
      <h1>Page not found</h1>
      <p>
        There is no such page. Go to the <Link href="/">cluster overview</Link> to pick a node.
      </p>
    </div>
  );
}
