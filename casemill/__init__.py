"""Casemill."""
