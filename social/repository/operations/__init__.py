"""Operators' work: bulk writes (seed, rebuild), repair, export and import."""
