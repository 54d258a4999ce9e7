// Kubernetes timestamps are RFC 3339 with second precision (apimachinery's metav1.Time).

export function kubeTime(date: Date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
