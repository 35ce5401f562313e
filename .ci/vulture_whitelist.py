"""What vulture (`vulture src/clew .ci/vulture_whitelist.py --min-confidence 80`, in .ci/run)
takes for dead but is not: each name is used where vulture cannot see it. Nothing runs this
file; vulture only reads the names.

At a lower confidence vulture also lists what registers by decorator (projection handlers,
tools, reactions, date parsers), the methods of other libraries' protocols (ADK, LangGraph, the
Agents SDK), the documented extension points (`_subscribe`, `_register_job`) and the fields of
public value types: those were read by hand (issue 26) and are not dead."""

parser  # argparse.Action.__call__'s signature (cli/common.py)
option_string  # argparse.Action.__call__'s signature (cli/common.py)
tool_use_id  # the Claude Agent SDK's HookCallback signature (integrations/claude_agent_sdk.py)
HookCallback  # named in a string cast (integrations/claude_agent_sdk.py)
SplitResult  # named in string annotations (origin.py)
parameters  # DB-API execute's signature, in a Protocol (store/sql.py)
