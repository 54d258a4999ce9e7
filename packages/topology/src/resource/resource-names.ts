// Extended resource name rules, as the kubelet's v1helper.IsExtendedResourceName
// (pkg/apis/core/v1/helper, release-1.33) applies them to Register requests: `domain/name`, not in
// the kubernetes.io domains, not `requests.`-prefixed, and `requests.` + name must be a valid
// qualified name.

const QUALIFIED_NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function isQualifiedName(value: string): boolean {
  const parts = value.split('/');
  if (parts.length > 2) return false;
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) return false;
  }
  return name.length > 0 && name.length <= 63 && QUALIFIED_NAME_PART.test(name);
}

/** True for names in the kubernetes.io namespace (native resources), as IsNativeResource. */
export function isNativeResourceName(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

export function isExtendedResourceName(name: string): boolean {
  if (isNativeResourceName(name) || name.startsWith('requests.')) return false;
  // Quota uses `requests.<name>`, so that string must be a valid qualified name too.
  return isQualifiedName(`requests.${name}`);
}
