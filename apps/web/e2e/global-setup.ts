// Starts the real cluster fixture (kubelet-sim + gateways) and the production web server once for
// all specs; their pids and URLs travel to the specs and the teardown through the environment.
import { createServer } from 'node:net';
import type { FixtureInfo } from './cluster-fixture';
import { startFixture, startWebServer, stopPid } from './processes';

export default async function globalSetup(): Promise<void> {
  const fixture = await startFixture();
  process.env.PLUGBOARD_FIXTURE_PID = String(fixture.child.pid);
  process.env.PLUGBOARD_FIXTURE = fixture.value;
  const info = JSON.parse(fixture.value) as FixtureInfo;
  // A gateway that is listed but not running, for the "gateway unreachable" states.
  let web;
  try {
    const ghost = `ghost-node=http://127.0.0.1:${await closedPort()}`;
    web = await startWebServer([...info.gateways.map((g) => `${g.name}=${g.url}`), ghost].join(','));
  } catch (err) {
    // Teardown does not run when setup fails: never leave the cluster behind.
    await stopPid(fixture.child.pid);
    throw err;
  }
  process.env.PLUGBOARD_WEB_PID = String(web.child.pid);
  process.env.PLUGBOARD_WEB_URL = web.value;
  // Detach our handles so the runner's event loop is not held open by the pipes.
  fixture.child.unref();
  web.child.unref();
}

/** A port nothing listens on: bind one, then release it. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
