// The synthetic text the data benches fill their collections with:
// deterministic, so every run reads the same records.

/** A deterministic stream of numbers in [0, 1). */
export function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const syllables = 'ka lo mi ra ve to su ne pa ri do fe la mo ti ga be zu ho wi'.split(' ');
/** 4,000 made-up words of three syllables; the benches add a few real ones with known frequencies. */
export const words = Array.from({ length: 4000 }, (_, i) =>
  [i % 20, Math.floor(i / 20) % 20, Math.floor(i / 400) % 20].map((s) => syllables[s]).join(''),
);
