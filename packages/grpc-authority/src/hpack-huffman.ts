// The HPACK Huffman code (RFC 7541 Appendix B) as data for hpack.ts, which encodes and decodes
// with it. The code is canonical (codes assigned in order of length, then symbol), so the table
// below holds only the 257 code lengths — octets 0..255 and EOS (256) — and the codes and the
// decoding tree are derived from them at load.

// prettier-ignore
export const HUFFMAN_CODE_LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30,
];

export const HUFFMAN_EOS = 256;

/** codes[s] is symbol s's code, right-aligned in HUFFMAN_CODE_LENGTHS[s] bits. */
export const HUFFMAN_CODES: readonly number[] = (() => {
  const symbols = HUFFMAN_CODE_LENGTHS.map((_, s) => s).sort(
    (a, b) => HUFFMAN_CODE_LENGTHS[a]! - HUFFMAN_CODE_LENGTHS[b]! || a - b,
  );
  const codes = new Array<number>(HUFFMAN_CODE_LENGTHS.length).fill(0);
  let code = 0;
  let length = HUFFMAN_CODE_LENGTHS[symbols[0]!]!;
  symbols.forEach((s, i) => {
    if (i > 0) code = (code + 1) * 2 ** (HUFFMAN_CODE_LENGTHS[s]! - length);
    length = HUFFMAN_CODE_LENGTHS[s]!;
    codes[s] = code;
  });
  return codes;
})();

/**
 * The decoder as a state machine that reads 4 bits at a time (as nghttp2's does). A state is an
 * inner node of the code tree (0 is the root); for state s and nibble x, entry 16s + x holds the
 * state reached, the symbol completed on the way (every code is at least 5 bits long, so at most
 * one), or EOS when the nibble runs into it. `pendingBits` and `pendingAllOnes` say what ending a
 * string in a state leaves as padding: RFC 7541 §5.2 allows at most 7 bits, all ones.
 */
export const HUFFMAN_DECODER = (() => {
  const NO_CHILD = 0; // the root is nobody's child
  const tree = new Int32Array(2 * 256).fill(NO_CHILD); // tree[2n + bit]: node n's child; < 0: ~symbol
  const pendingBits = new Uint8Array(256);
  const pendingAllOnes = new Uint8Array(256).fill(1);
  let nodes = 1;
  HUFFMAN_CODE_LENGTHS.forEach((length, symbol) => {
    const code = HUFFMAN_CODES[symbol]!;
    let node = 0;
    for (let i = length - 1; i >= 0; i--) {
      const bit = Math.floor(code / 2 ** i) & 1;
      const slot = 2 * node + bit;
      if (i === 0) {
        tree[slot] = ~symbol;
      } else {
        if (tree[slot] === NO_CHILD) {
          const child = nodes++;
          tree[slot] = child;
          pendingBits[child] = pendingBits[node]! + 1;
          pendingAllOnes[child] = pendingAllOnes[node]! & bit;
        }
        node = tree[slot]!;
      }
    }
  });
  const next = new Uint8Array(256 * 16);
  const symbol = new Int16Array(256 * 16).fill(-1);
  for (let state = 0; state < nodes; state++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = state;
      for (let shift = 3; shift >= 0; shift--) {
        const child = tree[2 * node + ((nibble >> shift) & 1)]!;
        if (child >= 0) {
          node = child;
        } else {
          symbol[16 * state + nibble] = ~child;
          node = 0;
          if (~child === HUFFMAN_EOS) break;
        }
      }
      next[16 * state + nibble] = node;
    }
  }
  return { next, symbol, pendingBits, pendingAllOnes };
})();
