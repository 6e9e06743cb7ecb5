import type { z } from 'zod';

/** One line naming each field that failed and why: `name: too long; days: must be 7, 30 or 90`. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((i) => {
    const path = i.path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${pathKey(String(p))}` : pathKey(String(p))), '');
    if (i.code === 'unrecognized_keys') {
      const keys = i.keys.map((k) => (path ? `${path}.${k}` : k));
      return `unknown key${keys.length > 1 ? 's' : ''} ${keys.join(', ')}`;
    }
    return path ? `${path}: ${i.message}` : i.message;
  }).join('; ');
}

/**
 * A key of a path as a message shows it. A URL key (config `upstream_methods`, keyed by
 * upstream URL) is cut to its origin: its path or user part may hold a provider's key.
 */
export function pathKey(key: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(key)) return key;
  try {
    return `<${new URL(key).origin}>`;
  } catch {
    return '<a URL>';
  }
}
