"""A test-only layer pack whose ZZZ layer multiplies by zzz_param.mul."""
