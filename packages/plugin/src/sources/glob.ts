// A small glob for device nodes. General-purpose glob libraries skip character devices (they
// report files and directories only), which is exactly what /dev holds. Supports `*`, `?`,
// `[...]` and `{a,b}` within a path segment; no `**` (device trees are shallow).
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

const GLOB_CHARS = /[*?[{]/;

export function isGlobSegment(segment: string): boolean {
  return GLOB_CHARS.test(segment);
}

export function segmentRegExp(segment: string): RegExp {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = segment.indexOf(']', i + 1);
      if (end < 0) out += '\\[';
      else {
        out += `[${segment
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else if (c === '{') {
      const end = segment.indexOf('}', i + 1);
      if (end < 0) out += '\\{';
      else {
        out += `(?:${segment
          .slice(i + 1, end)
          .split(',')
          .map((alt) => alt.replace(/[.+^$()|\\]/g, '\\$&'))
          .join('|')})`;
        i = end;
      }
    } else out += c.replace(/[.+^$()|\\\]}]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/** Absolute paths matching an absolute pattern (any file type, including devices and sockets). */
export async function globPaths(pattern: string): Promise<string[]> {
  let current = ['/'];
  for (const segment of pattern.split('/').filter(Boolean)) {
    if (!isGlobSegment(segment)) {
      current = current.map((dir) => join(dir, segment));
      continue;
    }
    const re = segmentRegExp(segment);
    const next: string[] = [];
    for (const dir of current) {
      const names = await readdir(dir).catch(() => [] as string[]);
      // Hidden entries only match a pattern that starts with a dot, like shells do.
      for (const name of names)
        if (re.test(name) && (name[0] !== '.' || segment[0] === '.')) next.push(join(dir, name));
    }
    current = next;
  }
  // The last non-glob segments may not exist.
  const existing = await Promise.all(
    current.map((path) =>
      lstat(path).then(
        () => path,
        () => null,
      ),
    ),
  );
  return existing.filter((p): p is string => p !== null);
}
