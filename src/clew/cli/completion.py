"""`clew completion bash|zsh|fish`: a shell completion script, made from the argument parser.

The parser is the one truth about commands and options, so the script is generated from it
(as shtab does), never written by hand: a command added to the CLI completes without an edit
here. The parser is walked into a table (each command path: its subcommands, its options and
the values of those with choices), and each shell gets that table in its own syntax. No
dependency, and no clew process runs while the user presses Tab.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from typing import Any, NamedTuple

from clew.cli.common import Commands

SHELLS = ("bash", "zsh", "fish")


class Node(NamedTuple):
    """What may follow a command path: its subcommands (with their help) and options."""

    path: tuple[str, ...]
    commands: tuple[tuple[str, str], ...]
    options: tuple[str, ...]
    values: tuple[tuple[str, tuple[str, ...]], ...]  # an option's (or argument's) choices
    valued: tuple[str, ...]  # the options that take a value (skipped with it)


def nodes(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[Node]:
    """Every command path of `parser`, the root first, with what may follow it."""
    subs: list[tuple[str, str, argparse.ArgumentParser]] = []
    options: list[str] = []
    values: list[tuple[str, tuple[str, ...]]] = []
    valued: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {c.dest: c.help or "" for c in action._choices_actions}
            subs += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
        elif action.help != argparse.SUPPRESS:
            options += action.option_strings
            if action.option_strings and action.nargs != 0:
                valued += action.option_strings
            choices = _choices(action)
            if choices and action.option_strings:
                values += [(option, choices) for option in action.option_strings]
            elif choices:  # a positional with choices (this command's)
                values.append(("", choices))
    yield Node(
        path,
        tuple((n, h) for n, h, _ in subs),
        tuple(sorted(set(options))),
        tuple(values),
        tuple(sorted(set(valued))),
    )
    for name, _, sub in subs:
        yield from nodes(sub, (*path, name))


def _choices(action: argparse.Action) -> tuple[str, ...]:
    """An argument's values: its choices, or those its metavar lists ("{a,b}": the tools'
    options check their values themselves, to say more than argparse would)."""
    if action.choices is not None:
        return tuple(map(str, action.choices))
    listed = (
        re.fullmatch(r"\{([^{}]+)\}", action.metavar or "")
        if isinstance(action.metavar, str)
        else None
    )
    return tuple(listed.group(1).split(",")) if listed else ()


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    """The completion script for `shell`, for the command `clew`."""
    table = list(nodes(parser))
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](table)


def _words(items: Any) -> str:
    return " ".join(items)


def _bash(table: list[Node]) -> str:
    # One case per command path (its words joined by "_"); the function finds the deepest
    # path the words typed so far name, skipping option values, and offers what follows it.
    cases = []
    for node in table:
        key = "_".join(node.path) or "_"
        words = _words([n for n, _ in node.commands] + list(node.options))
        cases.append(f'        {key}) words="{words}" ;;')
        for option, choices in node.values:
            name = f"{key}:{option}" if option else f"{key}:"
            cases.append(f'        "{name}") words="{_words(choices)}" ;;')
    return _BASH.format(cases="\n".join(cases), valued=_words(_valued(table)))


def _valued(table: list[Node]) -> list[str]:
    """Every option that takes a value, of any command: its value is no command word."""
    return sorted({o for node in table for o in node.valued})


_BASH = """\
# bash completion for clew (made by `clew completion bash`; source it, or save it as
# ~/.local/share/bash-completion/completions/clew)
_clew() {{
    local cur prev path word i key subs w valued
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    valued=" {valued} "
    path="_"
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${{COMP_WORDS[i]}}"
        if [[ "$valued" == *" $word "* ]]; then
            ((i++))
            continue
        fi
        [[ "$word" == -* ]] && continue
        if [[ "$path" == "_" ]]; then key="$word"; else key="${{path}}_$word"; fi
        _clew_words "$key" && path="$key"
    done
    if ((COMP_CWORD > 1)) && [[ "$valued" == *" $prev "* ]]; then
        _clew_words "$path:$prev" && COMPREPLY=($(compgen -W "$words" -- "$cur"))
        return 0
    fi
    _clew_words "$path" || return 0
    if [[ "$cur" != -* ]]; then
        subs=""
        for w in $words; do [[ "$w" == -* ]] || subs="$subs $w"; done
        _clew_words "$path:" && subs="$subs $words"
        words="$subs"
    fi
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
_clew_words() {{
    words=""
    case "$1" in
{cases}
        *) return 1 ;;
    esac
    return 0
}}
complete -F _clew clew
"""


def _zsh_quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "'\\''").replace(":", "\\:")


def _zsh(table: list[Node]) -> str:
    # _arguments-free: the same table as bash's, offered with `_describe` so that each
    # command shows its help beside it.
    cases = []
    for node in table:
        key = "_".join(node.path) or "_"
        described = " ".join(f"'{_zsh_quote(n)}:{_zsh_quote(_short(h))}'" for n, h in node.commands)
        cases.append(f"        {key}) commands=({described}); options=({_words(node.options)}) ;;")
        for option, choices in node.values:
            name = f"{key}:{option}" if option else f"{key}:"
            cases.append(f'        "{name}") commands=(); options=({_words(choices)}) ;;')
    return _ZSH.format(cases="\n".join(cases), valued=_words(_valued(table)))


_ZSH = """\
#compdef clew
# zsh completion for clew (made by `clew completion zsh`; save it as _clew in a folder of
# $fpath, or source it after compinit)
_clew_table() {{
    commands=(); options=()
    case "$1" in
{cases}
        *) return 1 ;;
    esac
    return 0
}}
_clew() {{
    local -a commands options valued
    local path=_ key word i
    valued=({valued})
    for ((i = 2; i < CURRENT; i++)); do
        word="${{words[i]}}"
        if (( ${{valued[(Ie)$word]}} )); then
            ((i++))
            continue
        fi
        [[ "$word" == -* ]] && continue
        if [[ "$path" == "_" ]]; then key="$word"; else key="${{path}}_$word"; fi
        _clew_table "$key" && path="$key"
    done
    if (( CURRENT > 2 )) && (( ${{valued[(Ie)${{words[CURRENT-1]}}]}} )); then
        _clew_table "$path:${{words[CURRENT-1]}}" && compadd -- $options
        return
    fi
    if [[ "$PREFIX" == -* ]]; then
        _clew_table "$path" && compadd -- $options
        return
    fi
    if _clew_table "$path:"; then
        compadd -- $options
    fi
    _clew_table "$path" && (( ${{#commands}} )) && _describe 'command' commands
}}
if [[ "$funcstack[1]" == "_clew" ]]; then
    _clew "$@"
else
    compdef _clew clew
fi
"""


def _short(help_text: str) -> str:
    """A command's help on one short line, for a completion menu."""
    line = " ".join(help_text.split())
    return line if len(line) <= 60 else line[:59].rstrip() + "…"


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish(table: list[Node]) -> str:
    # Each line: what to offer when the words typed so far are exactly a command path
    # (`__clew_path` prints it: the words that are not options nor their values).
    lines = [_FISH_HEAD.format(valued=_words(_fish_quote(o) for o in _valued(table)))]
    for node in table:
        key = " ".join(node.path)
        when = f'-n "__clew_at {_fish_quote(key)}"'
        for name, help_text in node.commands:
            lines.append(
                f"complete -c clew -f {when} -a {_fish_quote(name)}"
                f" -d {_fish_quote(_short(help_text))}"
            )
        for option in node.options:
            if option.startswith("--"):
                lines.append(f"complete -c clew -f {when} -l {_fish_quote(option[2:])}")
            elif re.fullmatch(r"-\w", option):
                lines.append(f"complete -c clew -f {when} -s {_fish_quote(option[1:])}")
        for option, choices in node.values:
            if option.startswith("--"):
                lines.append(
                    f"complete -c clew -f {when} -l {_fish_quote(option[2:])} -x"
                    f" -a {_fish_quote(_words(choices))}"
                )
            elif not option:
                lines.append(f"complete -c clew -f {when} -a {_fish_quote(_words(choices))}")
    return "\n".join(lines) + "\n"


_FISH_HEAD = """\
# fish completion for clew (made by `clew completion fish`; save it as
# ~/.config/fish/completions/clew.fish)
function __clew_path
    set -l valued {valued}
    set -l words (commandline -opc)
    set -l path
    set -l skip 0
    for word in $words[2..-1]
        if test $skip -eq 1
            set skip 0
            continue
        end
        if contains -- $word $valued
            set skip 1
            continue
        end
        string match -q -- '-*' $word; and continue
        set path $path $word
    end
    echo (string join ' ' -- $path)
end
function __clew_at
    test (__clew_path) = "$argv[1]"
end
complete -c clew -f"""


def cmd_completion(args: argparse.Namespace) -> int:
    from clew.cli import build_parser

    sys.stdout.write(script(args.shell, build_parser()))
    return 0


def register(commands: Any, command: Commands) -> None:
    """Add `clew completion`."""
    p = command(
        commands,
        "completion",
        cmd_completion,
        "print a shell completion script: clew completion bash|zsh|fish",
        "Print a completion script for bash, zsh or fish, made from clew's own argument"
        " parser (commands, subcommands, options and their choices). Load it with"
        ' `eval "$(clew completion bash)"` (or save it where the shell looks: see'
        " docs/cli.md).",
    )
    p.add_argument("shell", choices=SHELLS, help="the shell: bash, zsh or fish")
