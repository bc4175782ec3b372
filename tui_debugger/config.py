"""Settings: defaults, overridden by the config file, then by environment
variables with the TUI_DEBUGGER_ prefix, then by command arguments."""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TUI_DEBUGGER_", extra="ignore")

    step_wait_ms: int = Field(5_000, ge=0, description="how long next/step/finish wait for the stop")
    continue_wait_ms: int = Field(10_000, ge=0, description="how long continue waits for the next stop")
    await_timeout_ms: int = Field(30_000, ge=0, description="default timeout of await / debug_wait")
    max_value_chars: int = Field(1_000, ge=20, description="longest value shown before it is cut")
    max_items: int = Field(100, ge=1, description="children listed at once")
    max_result_chars: int = Field(20_000, ge=1_000, description="largest answer to an agent")
    output_max_entries: int = Field(10_000, ge=10)
    output_max_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    redact: bool = Field(True, description="hide bearer tokens, keys and passwords in output and values")
    idle_timeout_s: int = Field(1_800, ge=0, description="a headless session ends after this long unused (0: never)")
    linger_s: int = Field(30, ge=0, description="a headless session's host stays this long after its program ends")
    context_lines: int = Field(5, ge=0)


@lru_cache(maxsize=1)
def settings() -> Settings:
    return Settings()


def reload_settings() -> Settings:
    settings.cache_clear()
    return settings()
