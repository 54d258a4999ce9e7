// The kubelet's rules for a device plugin's resource name (v1helper.IsExtendedResourceName):
// `domain/name`, `requests.` + name must be a qualified name, and the kubernetes.io namespaces are
// native resources. Checked locally so a bad name fails with a clear message instead of a kubelet
// rejection loop.
import { PluginError } from './errors.js';

const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Returns why `name` is not a valid extended resource name, or null when it is. */
export function resourceNameProblem(name: string): string | null {
  const slash = name.indexOf('/');
  if (slash < 0)
    return 'must be domain-prefixed (e.g. "example.com/gpu"); names without a domain are native resources';
  const domain = name.slice(0, slash);
  const short = name.slice(slash + 1);
  if (short.includes('/')) return 'must contain exactly one "/"';
  if (domain === 'kubernetes.io' || domain.endsWith('.kubernetes.io')) {
    return 'the kubernetes.io namespace is reserved for native resources';
  }
  if (domain.startsWith('requests.')) return 'the "requests." prefix is reserved for quota';
  if (domain.length > 253 - 'requests.'.length || !DNS_SUBDOMAIN.test(domain)) {
    return `domain "${domain}" must be a lowercase DNS subdomain`;
  }
  // The kubelet validates `requests.<domain>/<name>` as a qualified name: the part after "/" is
  // limited to 63 characters of the qualified-name alphabet.
  if (short.length === 0 || short.length > 63 || !QUALIFIED_NAME_PART.test(short)) {
    return `name "${short}" must be 1-63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric`;
  }
  return null;
}

export function assertResourceName(name: string): void {
  const problem = resourceNameProblem(name);
  if (problem !== null) {
    throw new PluginError('invalid-resource-name', `invalid resource name "${name}": ${problem}`);
  }
}
