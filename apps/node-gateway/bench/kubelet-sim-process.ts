// The benchmark's kubelet-sim, in its own process as a kubelet is: its work on every ListAndWatch
// update (1,024 devices), node status and watch fan-out must not share an event loop with the
// WebSocket client whose receive time is measured. Driven over the fork IPC channel:
// parent → { admit: pod } | { stop: true }; child → { ready: info } | { admitted | error }.
import { pino } from 'pino';
import { startKubeletSim, type KubeletSimOptions, type PodSpecInput } from '@plugboard/kubelet-sim';

type Request = { id: number; admit: PodSpecInput } | { stop: true };

const send = (msg: unknown): void => {
  process.send!(msg);
};

const options = JSON.parse(process.argv[2]!) as KubeletSimOptions;
const sim = await startKubeletSim({ ...options, logger: pino({ level: 'silent' }) });
process.on('message', (req: Request) => {
  if ('stop' in req) {
    void sim.stop().then(() => process.exit(0));
    return;
  }
  sim.admitPod(req.admit).then(
    (pod) => send({ id: req.id, admitted: pod.metadata?.name }),
    (err: unknown) => send({ id: req.id, error: String(err) }),
  );
});
// The parent going away (Ctrl-C, a crash) ends the simulator too.
process.on('disconnect', () => void sim.stop().then(() => process.exit(0)));
send({
  ready: {
    url: sim.url,
    kubeconfigPath: sim.kubeconfigPath,
    podResourcesSocket: sim.podResourcesSocket,
    devicePluginDir: sim.devicePluginDir,
  },
});
