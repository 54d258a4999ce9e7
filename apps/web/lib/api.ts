// Browser-side calls to this origin's /api (the web server proxies them to the gateways).
// Problem+json answers become ApiError with the server's `detail`, so views can say why.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
  ) {
    super(detail || title);
    this.name = 'ApiError';
  }
}

export async function apiFetch<T>(
  path: string,
  init: RequestInit & { token?: string | null } = {},
): Promise<T> {
  const { token, ...rest } = init;
  const headers = new Headers(rest.headers);
  headers.set('accept', 'application/json, application/problem+json');
  if (token) headers.set('authorization', `Bearer ${token}`);
  let res: Response;
  try {
    res = await fetch(path, { ...rest, headers, cache: 'no-store' });
  } catch (err) {
    throw new ApiError(
      0,
      'Dashboard server unreachable',
      `the dashboard's own server did not answer: ${(err as Error).message}`,
    );
  }
  const text = await res.text();
  let body: unknown = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
  }
  if (!res.ok) {
    const p = (body ?? {}) as { title?: string; detail?: string };
    throw new ApiError(
      res.status,
      p.title ?? res.statusText,
      p.detail ?? (text.slice(0, 300) || `HTTP ${res.status}`),
    );
  }
  return body as T;
}

export function nodeApiPath(node: string, rest: string): string {
  return `/api/nodes/${encodeURIComponent(node)}/${rest}`;
}

/** ws:// or wss:// URL on this origin. */
export function streamUrl(path: string): string {
  const { protocol, host } = window.location;
  return `${protocol === 'https:' ? 'wss' : 'ws'}://${host}${path}`;
}
