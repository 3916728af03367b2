"""A test-only pack whose layer module cannot be imported."""
