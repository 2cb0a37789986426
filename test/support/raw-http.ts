import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/**
 * Sends `request` as the exact bytes given over a real TCP connection and reads the answer until the server
 * closes it: for request targets that `inject` or an HTTP client would normalise (absolute-form, odd encodings)
 * and for requests Node's HTTP parser refuses. Send `Connection: close` so the server ends the exchange.
 */
export function rawRequest(port: number, request: string | Buffer, timeoutMs = 5000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (err) => {
      clearTimeout(timer);
      // A server that answers then resets still answered: keep what arrived.
      if (chunks.length > 0) resolve(parse(Buffer.concat(chunks).toString('utf8')));
      else reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      if (chunks.length > 0) resolve(parse(Buffer.concat(chunks).toString('utf8')));
      else reject(new Error('the connection closed without an answer'));
    });
  });
}

function parse(text: string): RawAnswer {
  const headEnd = text.indexOf('\r\n\r\n');
  const head = headEnd < 0 ? text : text.slice(0, headEnd);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  return { status, headers: head, body: headEnd < 0 ? '' : text.slice(headEnd + 4) };
}
