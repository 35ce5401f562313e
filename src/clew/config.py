"""Settings: explicit arguments, then environment variables, then config files, then defaults.

Config files are TOML: `config.toml` beside the store (for a project store,
`.clew/config.toml`), then the user's `$XDG_CONFIG_HOME/clew/config.toml`
(~/.config/clew/config.toml). The first file that sets a key wins.

    [state]
    budget = 1500     # tokens for the always-in-prompt task state  (CLEW_STATE_BUDGET)
    mirror = true     # write tasks/<id>/state.yaml and journal.jsonl (CLEW_MIRROR=1)
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
