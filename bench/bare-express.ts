import express from 'express';

/** A bare Express 5 server answering a small JSON body: the framework's own ceiling. */
const app = express();
app.disable('x-powered-by');
app.get('/', (_req, res) => {
  res.json({ data: { id: 'usr_0', email: 'ceiling@example.com' } });
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('"msg":"listening"\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
