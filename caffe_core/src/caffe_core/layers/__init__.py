"""Layers the core itself needs: Split, which the Net inserts automatically."""
