import { describe, expect, it } from 'vitest';
import { mergeFilters, DEFAULT_FILTERS } from './filters.js';

describe('filters', () => {

  it('a PUT replaces the filter keys it names', () => {
    expect(mergeFilters(DEFAULT_FILTERS, { block: false, payment_networks: ['eth'] })).toEqual({ ...DEFAULT_FILTERS, block: false, payment_networks: ['eth'] });
  });
});
