// How every browser test and benchmark launches Debian's Chromium: no browser download, and the
// flags this machine needs (background networking off: the network is closed).
export const CHROMIUM_EXECUTABLE = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
