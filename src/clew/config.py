"""Settings: explicit arguments, then environment variables, then config files, then defaults.

Config files are TOML: `config.toml` beside the store (for a project store,
`.clew/config.toml`), then the user's `$XDG_CONFIG_HOME/clew/config.toml`
(~/.config/clew/config.toml). The first file that sets a key wins.

    [state]
    budget = 1500     # tokens for the always-in-prompt task state  (CLEW_STATE_BUDGET)
    mirror = true     # write tasks/<id>/state.yaml and journal.jsonl (CLEW_MIRROR=1)

    [maintenance]
    enabled = true          # off: nothing runs by itself          (CLEW_MAINTENANCE=0)
    interval = "1h"         # at most one run per interval         (CLEW_MAINTENANCE_INTERVAL)
    pause_after = "24h"     # pause active tasks idle this long    (CLEW_PAUSE_AFTER; "never")
    archive_after = "7d"    # archive tasks closed this long ago   (CLEW_ARCHIVE_AFTER; "never")
    prune_patterns = true   # deprecate patterns under 70% after 10 trials (CLEW_PRUNE_PATTERNS)
"""

from __future__ import annotations

import os
from typing import Any

from clew.errors import ValidationError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def config_files(store_path: str) -> list[str]:
    """The config files that apply to a store, most specific first."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return [
        os.path.join(os.path.dirname(os.path.abspath(store_path)), "config.toml"),
        os.path.join(base, "clew", "config.toml"),
    ]


def load(store_path: str) -> dict[str, Any]:
    """Merge the config files of a store into one dict of sections (most specific wins)."""
    merged: dict[str, Any] = {}
    for path in reversed(config_files(store_path)):
        if not os.path.isfile(path):
            continue
        import tomllib  # only when a config file exists: the CLI starts without it

        try:
            with open(path, "rb") as handle:
                data = tomllib.load(handle)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ValidationError(f"cannot read the config file {path}: {exc}") from None
        for section, values in data.items():
            if isinstance(values, dict):
                merged.setdefault(section, {}).update(values)
            else:
                merged[section] = values
    return merged


def setting(store_path: str, section: str, key: str, env: str, default: Any = None) -> Any:
    """Return one setting: environment variable `env`, else the config files, else default."""
    if env in os.environ:
        return os.environ[env]
    return load(store_path).get(section, {}).get(key, default)


def flag(value: object, name: str) -> bool:
    """Read a yes/no setting given as a bool or as text."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValidationError(f"{name} must be true or false, not {value!r}")


# -- the utility model -----------------------------------------------------------------------

_MODEL_ENV = {"small": "CLEW_MODEL", "large": "CLEW_LARGE_MODEL"}
LIMIT_DEFAULTS = {
    "calls_per_task": 200,
    "tokens_per_task": 400_000,
    "calls_per_day": 2_000,
    "tokens_per_day": 4_000_000,
}


def model_settings(store_path: str, role: str) -> Any:
    """How to reach the `small` or `large` model, or None when it is not configured.

    From the environment (CLEW_MODEL, CLEW_MODEL_PROVIDER, CLEW_MODEL_URL,
    CLEW_MODEL_API_KEY; CLEW_LARGE_MODEL... for the large one), else `[model]` and
    `[model.large]` in the config files (`api_key_env` names the variable holding the key).
    """
    from clew.providers import PROVIDERS, ModelSettings

    prefix = _MODEL_ENV[role]
    section = load(store_path).get("model", {})
    if role == "large":
        section = section.get("large", {}) if isinstance(section, dict) else {}
    if not isinstance(section, dict):
        raise ValidationError("the [model] setting in config.toml must be a table")
    name = os.environ.get(prefix) or section.get("model")
    if not name:
        return None
    provider = os.environ.get(f"{prefix}_PROVIDER") or section.get("provider") or "openai"
    if provider not in PROVIDERS:
        raise ValidationError(f"model provider {provider!r} is not one of: {', '.join(PROVIDERS)}")
    key = os.environ.get(f"{prefix}_API_KEY") or section.get("api_key")
    key_env = section.get("api_key_env") or (
        "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
    )
    key = key or os.environ.get(str(key_env))
    try:
        timeout = float(os.environ.get(f"{prefix}_TIMEOUT") or section.get("timeout") or 30)
        retries = int(os.environ.get(f"{prefix}_RETRIES") or section.get("retries") or 3)
    except (TypeError, ValueError):
        raise ValidationError("model timeout and retries must be numbers") from None
    if timeout <= 0 or retries < 0:
        raise ValidationError("model timeout must be positive and retries not negative")
    return ModelSettings(
        provider=str(provider),
        model=str(name),
        base_url=os.environ.get(f"{prefix}_URL") or section.get("base_url"),
        api_key=key,
        timeout=timeout,
        retries=retries,
    )


def limits(store_path: str) -> dict[str, int]:
    """The cost governor's caps: calls and tokens per task and per day (UTC)."""
    section = load(store_path).get("limits", {})
    caps = {}
    for key, default in LIMIT_DEFAULTS.items():
        raw = os.environ.get(f"CLEW_{key.upper()}") or section.get(key, default)
        try:
            caps[key] = int(raw)
        except (TypeError, ValueError):
            raise ValidationError(f"limit {key} must be a whole number, not {raw!r}") from None
        if caps[key] < 0:
            raise ValidationError(f"limit {key} cannot be negative")
    return caps


WORKERS = ("auto", "thread", "process", "off")


def maintenance(store_path: str) -> Any:
    """The `[maintenance]` settings, from the environment, else the config files."""
    from clew.lifecycle import MaintenanceSettings, seconds

    section = load(store_path).get("maintenance", {})
    if not isinstance(section, dict):
        raise ValidationError("the [maintenance] setting in config.toml must be a table")
    default = MaintenanceSettings()

    def get(key: str, env: str, value: object) -> object:
        return os.environ[env] if env in os.environ else section.get(key, value)

    interval = seconds(
        get("interval", "CLEW_MAINTENANCE_INTERVAL", default.interval),
        "maintenance interval",
        allow_never=False,
    )
    return MaintenanceSettings(
        enabled=flag(get("enabled", "CLEW_MAINTENANCE", True), "maintenance"),
        interval=interval if interval is not None else default.interval,
        pause_after=seconds(get("pause_after", "CLEW_PAUSE_AFTER", default.pause_after),
                            "pause_after"),
        archive_after=seconds(get("archive_after", "CLEW_ARCHIVE_AFTER", default.archive_after),
                              "archive_after"),
        prune_patterns=flag(get("prune_patterns", "CLEW_PRUNE_PATTERNS", True), "prune_patterns"),
    )  # fmt: skip


def settings(store_path: str, *, state_budget: object = None, mirror: object = None) -> Any:
    """Everything a Memory reads from the environment and config files, checked."""
    from clew import checks
    from clew.facade import Settings
    from clew.providers import connect
    from clew.state import DEFAULT_BUDGET

    if state_budget is None:
        state_budget = setting(store_path, "state", "budget", "CLEW_STATE_BUDGET", DEFAULT_BUDGET)
    if mirror is None:
        mirror = setting(store_path, "state", "mirror", "CLEW_MIRROR", False)
    small = model_settings(store_path, "small")
    large = model_settings(store_path, "large")
    every = setting(store_path, "summary", "every", "CLEW_SUMMARY_EVERY", 5)
    worker = str(setting(store_path, "model", "worker", "CLEW_WORKER", "auto"))
    if worker not in WORKERS:
        raise ValidationError(f"worker {worker!r} is not one of: {', '.join(WORKERS)}")
    return Settings(
        state_budget=checks.budget(state_budget, "state budget"),
        mirror=flag(mirror, "mirror"),
        small=None if small is None else connect(small),
        large=None if large is None else connect(large),
        limits=limits(store_path),
        summary_every=checks.count(int(every) if str(every).isdigit() else every, "summary every"),
        worker=worker,
        maintenance=maintenance(store_path),
    )
