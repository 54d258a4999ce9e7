// The gateway's version as reported in the snapshot (kept equal to package.json's "version").
export const GATEWAY_VERSION = '0.1.0';
