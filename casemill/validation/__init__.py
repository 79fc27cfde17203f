"""Validation in layers: json, schema and model (on load), semantic and lint (per case), batch
(a Great Expectations suite over the whole set). Every finding names file, line, field, layer
and rule; bad records go to a quarantine file, good ones are kept. The input is streamed: a case
is checked as it is read, and the batch layer keeps a few scalars a case (`BatchColumns`).

    from casemill.validation import validate_paths, write_quarantine
    report = validate_paths(["seeds/"])
"""

from casemill.validation.batch import BatchColumns, BatchRules, Row, batch_findings
from casemill.validation.findings import Finding
from casemill.validation.lints import lint_findings
from casemill.validation.loading import BadRecord, LoadedCase, LoadResult, expand_paths, load_cases
from casemill.validation.report import (
    LAYERS,
    ValidationReport,
    check_case,
    quarantine_record,
    validate_paths,
    write_quarantine,
)
from casemill.validation.schema import SchemaLayer, case_json_schema
from casemill.validation.semantic import semantic_findings

__all__ = [
    "LAYERS",
    "BadRecord",
    "BatchColumns",
    "BatchRules",
    "Finding",
    "LoadResult",
    "LoadedCase",
    "Row",
    "SchemaLayer",
    "ValidationReport",
    "batch_findings",
    "case_json_schema",
    "check_case",
    "expand_paths",
    "lint_findings",
    "load_cases",
    "quarantine_record",
    "semantic_findings",
    "validate_paths",
    "write_quarantine",
]
