// The benchmark's baselines, each in a process of its own like the gateway and started with the same
// node flags and environment (plain JavaScript, so no loader sits in the measurement):
//   idle  nothing but node itself, what any gateway process costs before its own code (RSS baseline);
//   echo  a bare HTTP server whose POST handler sends the request body to every client of a bare
//         `ws` server: the floor under "fault → patch at a client" (same transport, none of the
//         gateway's work). Prints its URL on stdout.
import { createServer } from 'node:http';

const mode = process.argv[2];
if (mode === 'idle') {
  setInterval(() => undefined, 60_000);
  process.stdout.write('ready\n');
} else if (mode === 'echo') {
  const { WebSocketServer } = await import('ws');
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      for (const ws of wss.clients) ws.send(body);
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"id":"x"}');
    });
  });
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`http://127.0.0.1:${server.address().port}\n`);
  });
} else {
  process.stderr.write('usage: bare-process.mjs idle|echo\n');
  process.exit(2);
}
