// One request to the Kubernetes API server, as the kubelet-sim source makes it: kube-connection.ts
// implements it with the kubeconfig's TLS settings and credentials, kubelet-control.ts uses it.

/** A response of the API server, body read in full. */
export interface ApiServerResponse {
  status: number;
  contentType: string;
  etag: string | null;
  body: string;
}

/**
 * One request to the API server with the kubeconfig's TLS settings and credentials (kube-connection.ts
 * builds it from @kubernetes/client-node's KubeConfig on node:http/https).
 */
export type ApiServerRequest = (
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  /** Path and query, e.g. `/control/v1/state?view=admissions`. */
  path: string,
  options: { headers?: Record<string, string>; body?: string; timeoutMs: number },
) => Promise<ApiServerResponse>;
