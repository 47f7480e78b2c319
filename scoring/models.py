"""Metric scores per pair live here (scoring engine)."""
