"""Settings, from the environment (prefix `CASEMILL_`) or a `.env` file.

Nothing here is read at import time by library code: callers build `Settings()` at the edge
(CLI, flows) and pass what is needed down.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

OPENAI_BASE_URL = "https://api.openai.com/v1"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CASEMILL_", env_file=".env", extra="ignore")

    corpus_dir: Path = Path("corpus")
    seeds_dir: Path = Path("seeds")
    review_db: str = "sqlite:///.casemill/review.db"

    # Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server). Falls back to
    # OPENAI_BASE_URL / OPENAI_API_KEY when the CASEMILL_ ones are not set; OPENAI_API_KEY with
    # no base URL at all means OpenAI's own endpoint, as it does for the openai SDK.
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 3

    def resolved_llm(self) -> tuple[str | None, str | None, SecretStr | None]:
        import os

        base = self.llm_base_url or os.environ.get("OPENAI_BASE_URL")
        if not base and os.environ.get("OPENAI_API_KEY"):
            base = OPENAI_BASE_URL
        key = self.llm_api_key or (
            SecretStr(os.environ["OPENAI_API_KEY"]) if os.environ.get("OPENAI_API_KEY") else None
        )
        model = self.llm_model or os.environ.get("CASEMILL_MODEL")
        return base, model, key
