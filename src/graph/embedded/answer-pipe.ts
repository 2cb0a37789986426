/**
 * A subgraph's answer from the Kùzu process on a pipe of its own, beside the IPC channel (kuzu-protocol.ts).
 *
 * Why: `process.send` serialises its message on the sender's thread (2.4 ms for a 263 KB answer), where a pipe's
 * write hands the bytes to the kernel (0.04 ms). Each frame names its run, so an answer can only ever reach the query
 * that asked for it, whatever the order of the two channels; a frame cut short by the process's death is dropped with
 * the process (its pending queries fail on its exit).
 *
 * A frame: a header of HEADER_BYTES (the run's id as uint32, 1 when truncated, the byte lengths of the nodes' and of
 * the edges' JSON as uint32), then those two JSON texts.
 */
import type { Readable } from 'node:stream';

/** The answer pipe's file descriptor in the Kùzu process (stdin, stdout, stderr, IPC, then this). */
export const ANSWER_FD = 4;
const HEADER_BYTES = 13;

export interface SubgraphFrame {
  id: number;
  nodes: Buffer;
  edges: Buffer;
  truncated: boolean;
}

/** The frame's header; its bytes follow as `nodes` then `edges`. */
export function frameHeader({ id, nodes, edges, truncated }: SubgraphFrame): Buffer {
  const header = Buffer.allocUnsafe(HEADER_BYTES);
  header.writeUInt32BE(id, 0);
  header.writeUInt8(truncated ? 1 : 0, 4);
  header.writeUInt32BE(nodes.length, 5);
  header.writeUInt32BE(edges.length, 9);
  return header;
}

/** Reads frames from the pipe as they come, each whole frame handed to `onFrame`. */
export function readFrames(pipe: Readable, onFrame: (frame: SubgraphFrame) => void): void {
  let chunks: Buffer[] = [];
  let buffered = 0;
  // The frame being read: undefined until its header is in.
  let header: { id: number; truncated: boolean; nodes: number; edges: number } | undefined;
  const take = (bytes: number): Buffer => {
    // Most answers arrive in several chunks of the pipe (64 KB): one copy into the answer's own buffer.
    const whole = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, buffered);
    const taken = whole.subarray(0, bytes);
    const rest = whole.subarray(bytes);
    chunks = rest.length ? [rest] : [];
    buffered = rest.length;
    return taken;
  };
  pipe.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    buffered += chunk.length;
    for (;;) {
      if (!header) {
        if (buffered < HEADER_BYTES) return;
        const bytes = take(HEADER_BYTES);
        header = { id: bytes.readUInt32BE(0), truncated: bytes.readUInt8(4) === 1, nodes: bytes.readUInt32BE(5), edges: bytes.readUInt32BE(9) };
      }
      if (buffered < header.nodes + header.edges) return;
      const body = take(header.nodes + header.edges);
      const { id, truncated, nodes } = header;
      header = undefined;
      onFrame({ id, truncated, nodes: body.subarray(0, nodes), edges: body.subarray(nodes) });
    }
  });
}
