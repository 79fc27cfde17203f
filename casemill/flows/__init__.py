"""Prefect flows: thin orchestration over the library (mine, expand, review, evaluate, and the
full pipeline). Importing this package sets Prefect's environment defaults first, and has
Prefect's run logs show a `UserError` as its message, once, without a traceback, and print
names such as `openai:m:` as they are (not as emoji)."""

from casemill.flows._logging import literal_logs, quiet_user_errors
from casemill.flows._runtime import configure_prefect_env

configure_prefect_env()
quiet_user_errors()
literal_logs()
