"""Dangling-reference detection, measured on a labelled list of user messages.

REFERS: messages that point at earlier conversation (the model needs the archive to act on
them). STANDALONE: messages that do not, including ones written to tempt a substring
matcher ("remember to", "earlier versions", "before you start", "make sure that").

Stated rates, asserted below: at most 5% false positives on STANDALONE, at least 90% of
REFERS detected. The phrases were tuned on these two lists, so those rates are optimistic;
the held-out lists at the end are the fair measure (45% found, 20% false positives).
"""

from __future__ import annotations

from clew.conversations import hints

REFERS = [
    "Like we discussed, use the repository pattern for this.",
    "Now add tests for that function.",
    "Can you fix that error?",
    "Go back to the previous approach, this one is slower.",
    "As I said, we cannot touch the public API.",
    "What did we decide about the cache TTL?",
    "Remember when we changed the retry logic? Do the same here.",
    "Use the same fix as before.",
    "Run that command again.",
    "Open that file and rename the class.",
    "Revert what we did to the config yesterday.",
    "We already tried bumping the timeout, right?",
    "Like I mentioned, the staging DB is read-only.",
    "Apply the suggestion you made earlier.",
    "The previous version of the script worked fine.",
    "Can you show me the diff you made earlier?",
    "Do it like last time.",
    "Use the original plan instead.",
    "That approach won't scale, go back to the old one.",
    "Is that bug fixed now?",
    "Where did we put those migrations?",
    "You said the tests were green, but CI is red.",
    "Put back the function you deleted earlier.",
    "What was the name of the endpoint we added?",
    "We talked about using Redis for this, didn't we?",
    "As discussed, keep the logs for 30 days.",
    "Same error as before when I run it.",
    "Try that again with verbose output.",
    "Didn't you mention a flag for dry runs?",
    "Do you remember which file had the race condition?",
    "Go back to where we were before the refactor.",
    "I told you not to use the ORM.",
    "Fix those tests too.",
    "Can you undo the last change?",
    "The first error you showed me is back.",
    "That traceback again, please look.",
    "Let's get back to the auth work.",
    "You suggested a lock there; implement it.",
    "We agreed on snake_case for the columns.",
    "What we had before was better.",
    "Previously it printed the totals; now it doesn't.",
    "Rename that module the way we said.",
    "Add a docstring to the class you created.",
    "Show me the output from earlier.",
    "Earlier you said the parser was done.",
    "Apply the same fix to the other service.",
    "That test still fails.",
    "Where's the snippet you wrote for pagination?",
    "Use my previous message as the spec.",
    "Back to the migration: is it reversible?",
    "Did we ever solve that issue with the locale?",
    "Change that config so it reads from the env.",
    "Like before, keep it under 100 lines.",
    "Remember the schema we designed? Add a column to it.",
    "Let's go back to the second option.",
    "Are those changes committed?",
    "What did you find in the logs we looked at?",
    "The one you mentioned first sounds better.",
    "Send those numbers again.",
    "I asked you to keep the old endpoint working.",
]

STANDALONE = [
    "Add a /health endpoint that returns 200.",
    "Write a function that parses ISO dates.",
    "Remember to run the linter before committing.",
    "This library supports Python 3.8 and earlier.",
    "Before you start, read CONTRIBUTING.md.",
    "Make sure that function names are snake_case.",
    "Create a new file called utils.py with a slugify helper.",
    "What is the difference between a list and a tuple?",
    "Please set up CI with GitHub Actions.",
    "Fix the typo in README line 3: 'recieve'.",
    "Use PostgreSQL 16 for the database.",
    "Refactor auth.py to use dependency injection.",
    "Why does this code raise KeyError: 'user'?\n\nprint(d['user'])",
    "Add retries with exponential backoff to the HTTP client.",
    "Explain how the event loop works in asyncio.",
    "Generate a migration that adds an index on users.email.",
    "How do I pin a dependency in pyproject.toml?",
    "Write unit tests for the Cart class in cart.py.",
    "Deploy to staging after the tests pass.",
    "Please summarize this paragraph: The quick brown fox jumps over the lazy dog.",
    "Add type hints to every function in models.py.",
    "Is it better to use a dataclass or a NamedTuple here?",
    "Start a new branch called feature/export.",
    "Log a warning when the config file is missing.",
    "What does the -u flag of git push do?",
    'Convert this JSON to YAML: {"a": 1}',
    "Delete the tmp directory after the build.",
    "Never commit secrets to the repository.",
    "Always use UTC in timestamps.",
    "Write a SQL query that counts orders per day.",
    "Rename the variable x to total_price.",
    "Can you make the CLI output colored?",
    "Add pagination to the /users endpoint.",
    "Check whether the port 8080 is free.",
    "The build takes 10 minutes; can we cache the pip downloads?",
    "Read the file config/settings.toml and list its sections.",
    "Use tabs for indentation in the Makefile.",
    "Create a Dockerfile for this service.",
    "Older releases used a different format; support only the new one.",
    "Count the lines of code in src/.",
    "Optimize the image loading, it is slow.",
    "Set the timeout to 30 seconds.",
    "I want the report as a CSV file.",
    "Write a haiku about databases.",
    "Which sorting algorithm is stable?",
    "Add a --verbose option to the CLI.",
    "Install pytest and run the test suite.",
    "Show me the contents of setup.cfg.",
    "Make the error message clearer when the file is missing.",
    "Upgrade Django to 5.0.",
    "This is a new project: a todo app in Flask.",
    "Profile the import time of the package.",
    "Add a CHANGELOG entry for version 1.2.0.",
    "Let's use FastAPI for the web layer.",
    "Draw an ASCII diagram of the architecture.",
    "Translate the error messages to French.",
    "Find all TODO comments in the codebase.",
    "How many tokens does this prompt use?",
    "Write a regex that matches email addresses.",
    "Is there a race condition in this snippet?\n\nx += 1",
    "Make the tests run in parallel.",
    "Add a license header to each source file.",
    "Lint the code and fix what you can automatically.",
    "Bump the version number to 2.0.",
    "Can Python's sqlite3 load extensions?",
    "List the open ports on this machine.",
    "Put the constants in a separate module.",
    "Write the first draft of the design doc.",
    "The API must return JSON, never HTML.",
    "Split the monolith into three services.",
]


def _detected(messages: list[str]) -> list[str]:
    return [m for m in messages if hints.reference(m)]


def test_the_labelled_list_is_big_enough() -> None:
    assert len(REFERS) + len(STANDALONE) >= 100
    assert len(set(REFERS) | set(STANDALONE)) == len(REFERS) + len(STANDALONE)


def test_false_positive_rate_is_at_most_five_percent() -> None:
    fired = _detected(STANDALONE)
    assert len(fired) / len(STANDALONE) <= 0.05, fired


def test_at_least_ninety_percent_of_references_are_detected() -> None:
    missed = [m for m in REFERS if not hints.reference(m)]
    assert len(missed) / len(REFERS) <= 0.10, missed


def test_the_hint_names_the_phrase_and_the_tool() -> None:
    hint = hints.hint("Now add tests for that function.")
    assert hint is not None
    assert "'that function'" in hint and "conversation_recall" in hint
    assert hints.hint("Add a /health endpoint.") is None


# Written after the phrases were tuned on the lists above, and not tuned on since: the
# fairer measure of how the detector does on messages it has not seen.
HELD_OUT_REFERS = [
    "Put the retry loop back the way it was.",
    "Why did you change the timeout earlier?",
    "OK, now do the same for the orders table.",
    "Use the naming scheme from before.",
    "Can you re-run the benchmark you ran this morning?",
    "That doesn't match what you told me an hour ago.",
    "Continue with the plan we agreed on.",
    "The earlier output had a stack trace; where is it now?",
    "Restore the lines you removed.",
    "Let's revisit the caching idea.",
    "Apply your earlier suggestion about indexes.",
    "Is the bug from this morning still there?",
    "We settled on JWT, so implement refresh tokens.",
    "Compare it with the result we got last time.",
    "Which of the two options did we pick?",
    "Finish what you started in the parser.",
    "Go with the second design you proposed.",
    "The function you wrote yesterday has a bug.",
    "Add those to the changelog too.",
    "Same as the other endpoint.",
]
HELD_OUT_STANDALONE = [
    "Write a Makefile target that runs the tests.",
    "Before merging, squash the commits.",
    "Remember to close the file handle.",
    "Our users are on Python 3.9 or earlier.",
    "Add a button that says 'Go back to the home page'.",
    "Explain the previous-token head in transformers.",
    "Set up logging so that errors go to stderr.",
    "Return the last element of the list.",
    "Print the first line of each file.",
    "Create a class that wraps the HTTP session.",
    "How do I undo a git commit that was pushed?",
    "Make the CLI remember the last used profile.",
    "Add an 'as before' option to the diff tool.",
    "Use the same font as the header for the footer.",
    "Show a warning if the input is longer than 200 characters.",
    "Write tests that cover the error paths.",
    "Describe what a previous_hash field is in a blockchain.",
    "Implement a function that finds the earliest date.",
    "Check that file paths are absolute.",
    "Install the packages listed in requirements.txt.",
]


def test_held_out_rates_are_as_stated() -> None:
    """Measured when first run: 9 of 20 held-out references found (45%), 4 of 20 held-out
    standalone messages fire (20%). The phrases generalize much worse than the tuned lists
    suggest (docs/conversations.md says so); asserted so that a change cannot make them
    worse unnoticed. Do not tune on these lists: move them up and write new ones."""
    found = _detected(HELD_OUT_REFERS)
    fired = _detected(HELD_OUT_STANDALONE)
    assert len(found) / len(HELD_OUT_REFERS) >= 0.45, found
    assert len(fired) / len(HELD_OUT_STANDALONE) <= 0.20, fired
