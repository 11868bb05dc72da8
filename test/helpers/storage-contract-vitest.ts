import { describe, expect, it } from 'vitest';
import type { StorageDriver } from '../../src/core/internal.js';
import { storageContractCases } from './storage-contract.js';

/** Runs the storage contract as a vitest suite. */
export function storageContract(driver: string, open: () => Promise<StorageDriver>): void {
  describe(`storage contract: ${driver}`, () => storageContractCases({ it, expect }, open));
}
