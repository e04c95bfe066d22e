import { connect, type Socket } from 'node:net';
import { someIp } from './auth.ts';

export interface RaceRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface RaceResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The body parsed when it is JSON. */
  json: any;
}

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(body.subarray(at, lineEnd).toString(), 16);
    if (!size) break;
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

function parseResponse(raw: Buffer): RaceResponse {
  const headEnd = raw.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = raw.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.subarray(headEnd + 4);
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
  const text = body.toString('utf8');
  const json: unknown = (headers['content-type'] ?? '').includes('json') && text ? JSON.parse(text) : undefined;
  return { status: Number(statusLine.split(' ')[1]), headers, text, json };
}

/**
 * Sends every request at the same instant, as closely as a client can: each gets its own connection,
 * opened first; each request is written whole but for its last byte; then the last bytes are written
 * to all sockets in one synchronous loop, so the server receives the requests complete together
 * (the "last-byte synchronisation" of race-condition testing) instead of in the order they were built.
 */
export async function releaseTogether(baseUrl: string, requests: RaceRequest[]): Promise<RaceResponse[]> {
  const { hostname, port } = new URL(baseUrl);
  const sockets = await Promise.all(
    requests.map(
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(Number(port), hostname, () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  const answers = sockets.map(
    (socket) =>
      new Promise<RaceResponse>((resolve, reject) => {
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.once('error', reject);
        socket.once('end', () => resolve(parseResponse(Buffer.concat(chunks))));
      }),
  );
  const wires = requests.map((request) => {
    const body = Buffer.from(request.body ?? '', 'utf8');
    const headers = { host: `${hostname}:${port}`, connection: 'close', 'content-length': String(body.length), ...request.headers };
    const head = `${request.method} ${request.path} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
    return Buffer.concat([Buffer.from(head, 'latin1'), body]);
  });
  wires.forEach((wire, i) => (sockets[i] as Socket).write(wire.subarray(0, wire.length - 1)));
  // Let the partial requests reach the server and be parsed up to their last byte.
  await new Promise((resolve) => setTimeout(resolve, 50));
  wires.forEach((wire, i) => (sockets[i] as Socket).write(wire.subarray(wire.length - 1)));
  return Promise.all(answers);
}

/** `n` copies of one request, each from its own client address (per-IP limits stay out of the way). */
export function copies(n: number, request: RaceRequest): RaceRequest[] {
  return Array.from({ length: n }, () => ({ ...request, headers: { 'x-forwarded-for': someIp(), ...request.headers } }));
}
