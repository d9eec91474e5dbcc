"""Renderers: diagnostics (plain data) to text, JSON, GitHub annotations and SARIF. No validation logic here."""
