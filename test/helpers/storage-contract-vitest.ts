import { describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/repository.js';
import { storageContractCases } from './storage-contract.js';

/** Runs the storage contract as a vitest suite. */
export function storageContract(driver: string, open: () => Promise<Storage>): void {
  describe(`storage contract: ${driver}`, () => storageContractCases({ it, expect }, open));
}
