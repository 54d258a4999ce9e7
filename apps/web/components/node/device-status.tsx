// A device's entry in its claim's `status.devices` (KEP-4817), as the gateway observed it: the
// conditions its driver wrote (a `Ready` condition after prepare), the driver's data and network
// data. "status not reported" when the driver wrote none (most drivers do not).
import type { DraDeviceCondition, DraDeviceStatus } from '@plugboard/api';

const CONDITION_CLASS: Record<DraDeviceCondition['status'], string> = {
  True: 'ok',
  False: 'bad',
  Unknown: 'warn',
};

export function DeviceStatusView({
  status,
  device,
}: {
  status: DraDeviceStatus | undefined;
  device: string;
}) {
  if (!status) return <span className="muted">status not reported</span>;
  const network = status.networkData;
  return (
    <span role="group" aria-label={`Status of ${device} as its driver reported it`}>
      {status.conditions.length === 0 && <span className="muted">no conditions</span>}
      {status.conditions.map((c) => (
        <span
          key={c.type}
          className={`badge ${CONDITION_CLASS[c.status]}`}
          title={[c.message, c.lastTransitionTime ? `since ${c.lastTransitionTime}` : '']
            .filter(Boolean)
            .join(', ')}
        >
          {c.type}: {c.status}
          {c.reason ? ` (${c.reason})` : ''}
        </span>
      ))}
      {status.data && (
        <>
          {' '}
          <span className="muted">data</span> <span className="mono">{JSON.stringify(status.data)}</span>
        </>
      )}
      {network && (
        <>
          {' '}
          <span className="muted">network</span>{' '}
          <span className="mono">
            {[network.interfaceName, ...(network.ips ?? []), network.hardwareAddress]
              .filter(Boolean)
              .join(' ')}
          </span>
        </>
      )}
    </span>
  );
}
