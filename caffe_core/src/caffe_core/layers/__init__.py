"""Layers the core itself needs: Split, which the Net inserts, and Input, which the input upgrade creates."""
