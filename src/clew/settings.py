"""How a Memory behaves beyond its store: one value, made by `config.settings` from arguments,
the environment and config files, and read by the facade. Below both, so reading the
configuration never imports the facade."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from clew.core.lifecycle import MaintenanceSettings, StuckRules
from clew.models import VOLATILE_PARTS
from clew.privacy.redaction import DEFAULT as DEFAULT_REDACTION
from clew.privacy.redaction import Redactor

if TYPE_CHECKING:
    from clew.providers import Provider


class Settings(NamedTuple):
    """How a Memory behaves beyond its store (see `clew.open` and config.py)."""

    state_budget: int = 1500
    mirror: bool = False
    small: Provider | None = None  # the utility model: extraction, summaries, questions
    large: Provider | None = None  # for complex questions, if configured
    limits: dict[str, int] | None = None  # the cost governor's caps (config.LIMIT_DEFAULTS)
    summary_every: int = 5  # messages between running summaries
    # Who does queued jobs: a thread of this process, a detached `clew work` process, or
    # nobody until run_jobs(); "auto" is a thread in a library and a process for the CLI.
    worker: str = "auto"
    # Messages that say a step is done: "apply" completes the steps a message states are
    # done (by number or exact title) and suggests the rest; "suggest" only shows them;
    # "off" reads no message for progress (progress.py).
    progress: str = "apply"
    stuck: StuckRules = StuckRules()  # when a task counts as stuck, how often to alert
    maintenance: MaintenanceSettings = MaintenanceSettings()  # [maintenance] in config.toml
    # Secrets taken out of every free-text field before its event is made ([redact]).
    redaction: Redactor = DEFAULT_REDACTION
    # Parts of a command line that may differ between runs of one command ([errors]
    # volatile): regular expressions, temporary paths by default (linking.same_command).
    volatile: tuple[str, ...] = VOLATILE_PARTS
