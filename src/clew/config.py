"""Settings: explicit arguments, then environment variables, then config files, then defaults.

Config files are TOML: `config.toml` beside the store (for a project store,
`.clew/config.toml`), then the user's `$XDG_CONFIG_HOME/clew/config.toml`
(~/.config/clew/config.toml). The first file that sets a key wins.

    [state]
    budget = 1500     # tokens for the always-in-prompt task state  (CLEW_STATE_BUDGET)
    mirror = true     # write tasks/<id>/state.yaml and journal.jsonl (CLEW_MIRROR=1)

    [progress]
    mode = "apply"    # "step 2 done": apply (stated steps done), suggest or off (CLEW_PROGRESS)

    [stuck]
    after = "30m"     # no progress for this long is stuck       (CLEW_STUCK_AFTER)
    repeats = 3       # the same error from this many failed runs (CLEW_STUCK_REPEATS)
    cooldown = "30m"  # at most one stuck alert per task per ...  (CLEW_STUCK_COOLDOWN)
    enabled = true    #                                           (CLEW_STUCK=0 turns it off)

    [maintenance]
    enabled = true          # off: nothing runs by itself          (CLEW_MAINTENANCE=0)
    interval = "1h"         # at most one run per interval         (CLEW_MAINTENANCE_INTERVAL)
    pause_after = "24h"     # pause active tasks idle this long    (CLEW_PAUSE_AFTER; "never")
    archive_after = "7d"    # archive tasks closed this long ago   (CLEW_ARCHIVE_AFTER; "never")
    prune_patterns = true   # deprecate patterns under 70% after 10 trials (CLEW_PRUNE_PATTERNS)

    [redact]
    enabled = true          # secrets out of everything stored (CLEW_REDACT=off turns it off)
    patterns = { internal-token = "itk_[A-Za-z0-9]{32}" }  # more kinds: name = regex
    allow = ["AKIAIOSFODNN7EXAMPLE"]  # values never redacted, exactly these
    allow_patterns = ["sk_test_.*"]   # values never redacted, any one a regex matches whole
"""

from __future__ import annotations

import os
from typing import Any

from clew.errors import ValidationError

MAX_CONFIG_BYTES = 1024 * 1024  # a settings file; anything larger is a mistake
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def config_files(store_path: str) -> list[str]:
    """The config files that apply to a store, most specific first."""
    from clew.core.location import is_url

    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    user = os.path.join(base, "clew", "config.toml")
    if is_url(store_path):  # a team store has no folder of its own: the user's file applies
        return [user]
    return [os.path.join(os.path.dirname(os.path.abspath(store_path)), "config.toml"), user]


def load(store_path: str) -> dict[str, Any]:
    """Merge the config files of a store into one dict of sections (most specific wins)."""
    merged: dict[str, Any] = {}
    for path in reversed(config_files(store_path)):
        for section, values in _read(path).items():
            if isinstance(values, dict):
                merged.setdefault(section, {}).update(values)
            else:
                merged[section] = values
    return merged


def _read(path: str) -> dict[str, Any]:
    """One config file's sections ({} when there is no such file)."""
    if not os.path.isfile(path):
        return {}
    import tomllib  # only when a config file exists: the CLI starts without it

    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ValueError(f"it is larger than {MAX_CONFIG_BYTES // 1024} KB")
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValidationError(f"the config file {path} is not UTF-8 text") from None
    except (OSError, ValueError) as exc:  # TOML errors, too many digits
        reason = "a number has too many digits" if "digits" in str(exc) else str(exc)
        raise ValidationError(f"cannot read the config file {path}: {reason}") from None
    except RecursionError:  # tomllib nests arrays by recursion
        raise ValidationError(f"cannot read the config file {path}: nested too deeply") from None
    return data


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
    _refuse_project(store_path, "model")
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
        raw = str(os.environ.get(f"{prefix}_RETRIES") or section.get("retries") or 3)
        retries = int(raw) if len(raw) <= 19 else -1  # int() refuses thousands of digits
    except (TypeError, ValueError):
        raise ValidationError("model timeout and retries must be numbers") from None
    if not 0 < timeout <= 3600 or not 0 <= retries <= 100:  # nan and inf fail too
        raise ValidationError(
            "model timeout must be positive (at most 3600 seconds) and retries 0-100"
        )
    return ModelSettings(
        provider=str(provider),
        model=str(name),
        base_url=os.environ.get(f"{prefix}_URL") or section.get("base_url"),
        api_key=key,
        timeout=timeout,
        retries=retries,
    )


# What a store's own config file may set in [model] and [redact]: not where clew sends what it
# holds, nor less redaction. A project's .clew/config.toml arrives with the project (a clone,
# an archive): a model endpoint or key variable there would send the memory, and the key,
# wherever it says; redaction turned off or values allowed there would keep secrets.
_PROJECT_MAY = {"model": frozenset({"worker"}), "redact": frozenset({"patterns"})}
_PROJECT_WHY = {
    "model": "which model clew sends your memory to, and with which key, is yours to say",
    "redact": "whether secrets are kept out of your memory is yours to say",
}


def _refuse_project(store_path: str, section: str) -> None:
    """Refuse a store's own config file that sets what only the user may in `section`."""
    files = config_files(store_path)
    if len(files) < 2:  # a team store reads only the user's own file
        return
    found = _read(files[0]).get(section)
    if found is None:
        return
    said = sorted(set(found) - _PROJECT_MAY[section]) if isinstance(found, dict) else [section]
    if said:
        raise ValidationError(
            f"the config file {files[0]} beside the store sets [{section}] {', '.join(said)}:"
            f" {_PROJECT_WHY[section]}; move those lines to {files[1]} or the environment"
            f" ({'CLEW_MODEL...' if section == 'model' else 'CLEW_REDACT'})"
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
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def seconds(value: object, name: str) -> float:
    """Read a duration given as seconds (a number) or as text like 90s, 30m, 24h, 7d."""
    text = str(value).strip().lower()
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
        elif text[-1:] in _UNITS:
            number = float(text[:-1]) * _UNITS[text[-1]]
        else:
            number = float(text)
    except ValueError:
        raise ValidationError(
            f"{name} {value!r} is not a duration like 90s, 30m, 24h or 7d"
        ) from None
    if not number >= 0 or number == float("inf"):
        raise ValidationError(f"{name} must be a duration of zero or more, not {value!r}")
    return number


def progress_mode(store_path: str) -> str:
    """What a message saying a step is done does: apply (the default: a step it names by
    number or exact title is completed, one it only shares words with is suggested),
    suggest (nothing is completed; both are shown) or off."""
    from clew.tasks.progress import DEFAULT_MODE, MODES

    mode = str(setting(store_path, "progress", "mode", "CLEW_PROGRESS", DEFAULT_MODE))
    if mode.strip().lower() not in MODES:
        raise ValidationError(f"progress mode {mode!r} is not one of: {', '.join(MODES)}")
    return mode.strip().lower()


def stuck_rules(store_path: str) -> Any:
    """When a task counts as stuck, and how often it is alerted about (`[stuck]`)."""
    from clew.core.lifecycle import StuckRules

    base = StuckRules()
    after = setting(store_path, "stuck", "after", "CLEW_STUCK_AFTER", base.idle_after)
    cooldown = setting(store_path, "stuck", "cooldown", "CLEW_STUCK_COOLDOWN", base.cooldown)
    repeats = setting(store_path, "stuck", "repeats", "CLEW_STUCK_REPEATS", base.repeats)
    enabled = setting(store_path, "stuck", "enabled", "CLEW_STUCK", base.enabled)
    try:
        count = int(str(repeats).strip())
    except ValueError:
        raise ValidationError(f"stuck repeats must be a whole number, not {repeats!r}") from None
    if count < 2:
        raise ValidationError(f"stuck repeats must be at least 2, not {count}")
    return StuckRules(
        idle_after=seconds(after, "stuck after"),
        repeats=count,
        cooldown=seconds(cooldown, "stuck cooldown"),
        enabled=flag(enabled, "stuck enabled"),
    )


def maintenance(store_path: str) -> Any:
    """The `[maintenance]` settings, from the environment, else the config files."""
    from clew.core.lifecycle import MaintenanceSettings, seconds

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
        pause_after=seconds(
            get("pause_after", "CLEW_PAUSE_AFTER", default.pause_after), "pause_after"
        ),
        archive_after=seconds(
            get("archive_after", "CLEW_ARCHIVE_AFTER", default.archive_after), "archive_after"
        ),
        prune_patterns=flag(get("prune_patterns", "CLEW_PRUNE_PATTERNS", True), "prune_patterns"),
    )


_REDACT_KEYS = ("enabled", "patterns", "allow", "allow_patterns")


def redaction(store_path: str) -> Any:
    """The `[redact]` settings as a Redactor, from the environment (CLEW_REDACT), else the
    config files; each mistake refused with one line naming it."""
    from clew.privacy.redaction import Redactor, checked_kind

    _refuse_project(store_path, "redact")
    section = load(store_path).get("redact", {})
    if not isinstance(section, dict):
        raise ValidationError("the [redact] setting in config.toml must be a table")
    unknown = sorted(set(section) - set(_REDACT_KEYS))
    if unknown:
        raise ValidationError(
            f"unknown setting redact.{unknown[0]} in config.toml; [redact] takes:"
            f" {', '.join(_REDACT_KEYS)}"
        )
    raw = os.environ["CLEW_REDACT"] if "CLEW_REDACT" in os.environ else section.get("enabled")
    enabled = True if raw is None else flag(raw, "redact (CLEW_REDACT or redact.enabled)")
    patterns = section.get("patterns", {})
    if not isinstance(patterns, dict):
        raise ValidationError(
            'redact.patterns must be a table of kind = regex, e.g. { my-token = "mt_[a-z0-9]{32}" }'
        )
    extra: dict[str, str] = {}
    for kind, source in patterns.items():
        try:
            checked_kind(kind, "redact.patterns")
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        extra[kind] = _regex(source, f"redact.patterns.{kind}")
    allow = section.get("allow", [])
    if not isinstance(allow, list) or not all(isinstance(v, str) and v for v in allow):
        raise ValidationError("redact.allow must be a list of the exact values never redacted")
    allow_patterns = section.get("allow_patterns", [])
    if not isinstance(allow_patterns, list):
        raise ValidationError("redact.allow_patterns must be a list of regular expressions")
    checked = [_regex(p, f"redact.allow_patterns[{n}]") for n, p in enumerate(allow_patterns)]
    return Redactor(enabled=enabled, extra=extra, allow=allow, allow_patterns=checked)


def _regex(source: object, name: str, what: str = "a secret") -> str:
    """A regular expression from the config, checked: it compiles and never matches empty text."""
    import re

    if not isinstance(source, str) or not source:
        raise ValidationError(f"{name} must be a regular expression as text")
    try:
        compiled = re.compile(source)
    except re.error as exc:
        raise ValidationError(f"{name} is not a valid regular expression: {exc}") from None
    if compiled.fullmatch("") is not None:
        raise ValidationError(f"{name} matches empty text; make it match only {what}")
    return source


def settings(store_path: str, *, state_budget: object = None, mirror: object = None) -> Any:
    """Everything a Memory reads from the environment and config files, checked."""
    from clew.core import checks
    from clew.providers import connect
    from clew.settings import Settings
    from clew.state.document import DEFAULT_BUDGET

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
        summary_every=checks.count(checks.from_digits(every), "summary every"),
        worker=worker,
        progress=progress_mode(store_path),
        stuck=stuck_rules(store_path),
        maintenance=maintenance(store_path),
        redaction=redaction(store_path),
        volatile=volatile(store_path),
    )


def volatile(store_path: str) -> tuple[str, ...]:
    """The `[errors] volatile` regular expressions: parts of a command line that may differ
    between runs of one command (linking.same_command); temporary paths when not set."""
    from clew.models import VOLATILE_PARTS

    section = load(store_path).get("errors", {})
    if not isinstance(section, dict):
        raise ValidationError("the [errors] setting in config.toml must be a table")
    unknown = sorted(set(section) - {"volatile"})
    if unknown:
        raise ValidationError(
            f"unknown setting errors.{unknown[0]} in config.toml; [errors] takes: volatile"
        )
    found = section.get("volatile", VOLATILE_PARTS)
    if not isinstance(found, list | tuple):
        raise ValidationError(
            'errors.volatile must be a list of regular expressions, e.g. ["/tmp/tmp\\w+"]'
        )
    return tuple(_regex(source, "errors.volatile", "the part that varies") for source in found)
