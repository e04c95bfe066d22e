import { createServer } from 'node:http';

/** The ceiling: a bare Node HTTP server answering a small JSON body, nothing else. */
const body = JSON.stringify({ data: { id: 'usr_0', email: 'ceiling@example.com' } });
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('"msg":"listening"\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
