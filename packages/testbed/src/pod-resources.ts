// A PodResources v1 client for a kubelet's socket (the real kubelet's or kubelet-sim's).
import { credentials, type ServiceError } from '@grpc/grpc-js';
import { podresources } from '@plugboard/proto';

export interface PodResourcesClient {
  list(): Promise<podresources.ListPodResourcesResponse>;
  allocatable(): Promise<podresources.AllocatableResourcesResponse>;
  get(namespace: string, name: string): Promise<podresources.GetPodResourcesResponse>;
  close(): void;
}

export function podResourcesClient(socket: string): PodResourcesClient {
  const client = new podresources.PodResourcesListerClient(`unix://${socket}`, credentials.createInsecure());
  const unary = <T>(fn: (cb: (err: ServiceError | null, res: T) => void) => void): Promise<T> =>
    new Promise((resolve, reject) => fn((err, res) => (err ? reject(err) : resolve(res))));
  return {
    list: () => unary((cb) => client.list({}, cb)),
    allocatable: () => unary((cb) => client.getAllocatableResources({}, cb)),
    get: (namespace, name) => unary((cb) => client.get({ podNamespace: namespace, podName: name }, cb)),
    close: () => client.close(),
  };
}
