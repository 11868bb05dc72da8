import { describe, expect, it } from 'vitest';
import { scryptHasher } from '../src/node/security/password-hasher.js';

describe('the scrypt password hasher', () => {
  it('checks a password against its hash; an unmatchable value is checked at the same cost and never matches', async () => {
    const hash = await scryptHasher.hash('correct horse');
    expect(await scryptHasher.verify('correct horse', hash)).toBe(true);
    expect(await scryptHasher.verify('wrong horse', hash)).toBe(false);

    const unmatchable = scryptHasher.unmatchable!();
    expect(unmatchable).not.toBe(scryptHasher.unmatchable!());
    // The same scheme, cost and sizes as a real hash: verify derives a key at full cost.
    const shape = (value: string) => value.split('$').map((part, index) => (index < 4 ? part : part.length));
    expect(shape(unmatchable)).toEqual(shape(hash));
    expect(await scryptHasher.verify('correct horse', unmatchable)).toBe(false);
    expect(await scryptHasher.verify('', unmatchable)).toBe(false);
  });
});
