"""Prefect flows: thin orchestration over the library (mine, expand, review, evaluate, and the
full pipeline). Importing this package sets Prefect's environment defaults first."""

from flows._runtime import configure_prefect_env

configure_prefect_env()
