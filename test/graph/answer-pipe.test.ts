import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { frameHeader, readFrames, type SubgraphFrame } from '../../src/graph/embedded/answer-pipe.js';

const frame = (id: number, nodes: string, edges: string, truncated = false): SubgraphFrame => ({ id, nodes: Buffer.from(nodes), edges: Buffer.from(edges), truncated });
const bytes = (f: SubgraphFrame) => Buffer.concat([frameHeader(f), f.nodes, f.edges]);
const plain = (f: SubgraphFrame) => ({ id: f.id, nodes: f.nodes.toString(), edges: f.edges.toString(), truncated: f.truncated });

describe('the answer pipe of the Kùzu process', () => {
  it('reads every frame whole and as its own, however the pipe cuts the bytes, and never a frame cut short', () => {
    const frames = [frame(1, '[{"id":"a"}]', '[]'), frame(7, '[]', '[]', true), frame(3, `["${'é'.repeat(70_000)}"]`, '[{"id":"e"}]'), frame(4_000_000_000, '[1]', '[2]')];
    const all = Buffer.concat(frames.map(bytes));
    for (const size of [1, 5, 13, 64, 65_536, all.length]) {
      const pipe = new PassThrough();
      const read: SubgraphFrame[] = [];
      readFrames(pipe, (f) => read.push(f));
      for (let at = 0; at < all.length; at += size) pipe.write(all.subarray(at, at + size));
      // The start of a fifth frame, its process killed before the rest: nothing is handed on.
      pipe.write(bytes(frame(9, '[{"id":"lost"}]', '[]')).subarray(0, 20));
      expect(read.map(plain), `chunks of ${size}`).toEqual(frames.map(plain));
    }
  });
});
