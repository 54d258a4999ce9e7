// The live link in a real browser: the indicator, pausing while the tab is hidden (the socket is
// closed, so a hidden dashboard costs the gateways nothing) and resuming when it is shown.
import { expect, test } from '@playwright/test';
import { webUrl } from './helpers';

test('the stream pauses while the tab is hidden and resumes live when shown', async ({ page }) => {
  const sockets: { url: string; closed: boolean }[] = [];
  page.on('websocket', (ws) => {
    const entry = { url: ws.url(), closed: false };
    sockets.push(entry);
    ws.on('close', () => (entry.closed = true));
  });
  await page.goto(webUrl('/nodes/gpu-node-a'));
  const indicator = page
    .getByRole('status')
    .filter({ hasText: /Live|Paused|Reconnecting|Connecting/ })
    .first();
  await expect(indicator).toHaveText(/Live/);
  const nodeStreams = () => sockets.filter((s) => s.url.includes('/api/nodes/gpu-node-a/stream'));
  expect(nodeStreams().filter((s) => !s.closed)).toHaveLength(1);

  const setHidden = (hidden: boolean) =>
    page.evaluate(`(() => {
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => ${hidden} });
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => '${hidden ? 'hidden' : 'visible'}' });
      document.dispatchEvent(new Event('visibilitychange'));
    })()`);

  await setHidden(true);
  await expect(indicator).toHaveText(/Paused while the tab is hidden/);
  await expect.poll(() => nodeStreams().filter((s) => !s.closed).length).toBe(0);
  // Fault controls are disabled while the data is not live.
  await expect(page.getByRole('switch', { name: 'Fault gpu-5', exact: true })).toBeDisabled();

  await setHidden(false);
  await expect(indicator).toHaveText(/Live/);
  await expect.poll(() => nodeStreams().filter((s) => !s.closed).length).toBe(1);
  // The resumed socket continues from the last applied seq.
  expect(nodeStreams().at(-1)!.url).toMatch(/[?&]since=\d+/);
  await expect(page.getByRole('switch', { name: 'Fault gpu-5', exact: true })).toBeEnabled();
});
