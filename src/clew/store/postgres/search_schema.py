"""PostgreSQL's full-text index as the database keeps it: the `clew` text search
configuration and the functions that make a text's vector (clew_vector: its pieces stemmed
and its words as written) and a query term's tsquery (clew_term), the generated `search`
columns and their GIN indexes, and the documents of records and of the outline with the
triggers that keep them. Migration text: postgres/migrations.py runs these statements and
fingerprints them, so a change is a new migration, never an edit (postgres/search.py says how the
index is read and ranked).
"""

from __future__ import annotations

from collections.abc import Sequence

from clew.store.migrations import OUTLINE_COLUMNS, OUTLINE_TABLES, decision_body, outline_text
from clew.store.projection.frozen_error_lines import OUTPUT_HEAD, OUTPUT_TAIL

INDEX_HEAD = 60_000
INDEX_TAIL = 20_000

# The token types PostgreSQL's parser can make of text with no punctuation.
_OTHERS = "numword, int, uint, float, sfloat, version"
# A run of ASCII or Unicode punctuation (and symbols): where FTS5's tokenizer cuts and
# PostgreSQL's parser may not. `[[:punct:]]` rather than `[^[:alnum:]]`: the same cut
# around words (spaces and control characters are separators to the parser anyway), and
# a negated Unicode class makes PostgreSQL's regular expressions several times slower.
_PUNCT = "[[:punct:]]+"

FUNCTIONS: tuple[str, ...] = (
    # Diacritics are folded per token by the unaccent dictionary, as FTS5's
    # remove_diacritics does; the extension is trusted (no superuser needed) and lives
    # in `public` so that every schema's configuration uses the one copy.
    "CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public",
    # Words stemmed like FTS5's porter tokenizer (Snowball English), with no stop words;
    # a prefix is not stemmed (FTS5 matches `connecti*` against the stems as typed).
    # Made once per schema: a migration that finds them made goes on (PostgreSQL reports
    # an existing dictionary or configuration as a unique violation, not duplicate_object).
    f"""
    DO $$ BEGIN
        CREATE TEXT SEARCH DICTIONARY clew_stem (TEMPLATE = snowball, Language = english);
        CREATE TEXT SEARCH CONFIGURATION clew (PARSER = default);
        ALTER TEXT SEARCH CONFIGURATION clew ADD MAPPING FOR asciiword WITH clew_stem;
        ALTER TEXT SEARCH CONFIGURATION clew ADD MAPPING FOR word
            WITH public.unaccent, clew_stem;
        ALTER TEXT SEARCH CONFIGURATION clew ADD MAPPING FOR {_OTHERS}
            WITH public.unaccent, simple;
        CREATE TEXT SEARCH CONFIGURATION clew_prefix (PARSER = default);
        ALTER TEXT SEARCH CONFIGURATION clew_prefix ADD MAPPING FOR asciiword, word, {_OTHERS}
            WITH public.unaccent, simple;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
    END $$
    """,
    # Text cut to its head and tail: a tsvector holds at most 1 MB.
    f"""
    CREATE OR REPLACE FUNCTION clew_bounded(doc text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN length(doc) > {INDEX_HEAD + INDEX_TAIL}
        THEN left(doc, {INDEX_HEAD}) || ' ' || right(doc, {INDEX_TAIL}) ELSE doc END
    """,
    # The words with punctuation inside, as written: lowercased, each once.
    f"""
    CREATE OR REPLACE FUNCTION clew_forms(doc text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ARRAY(SELECT DISTINCT m[1] FROM regexp_matches(
        lower(clew_bounded(doc) COLLATE "default"),
        '([[:alnum:]]+(?:{_PUNCT}[[:alnum:]]+)+)', 'g') AS m
        WHERE length(m[1]) <= 200 ORDER BY m[1])
    """,
    # The pieces of a text: each run of punctuation a space.
    f"""
    CREATE OR REPLACE FUNCTION clew_pieces(doc text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN btrim(regexp_replace(clew_bounded(doc) COLLATE "default", '{_PUNCT}', ' ', 'g'))
    """,
    # One column's vector: its pieces stemmed, and its words as written, each once at
    # position 1 (a position, so that they carry the column's weight and count in
    # ts_rank_cd; no phrase reads it, as no phrase holds a word with punctuation). A
    # tsvector lexeme is quoted: quotes doubled, backslashes escaped. PL/pgSQL, here and
    # in clew_term, so the planner calls it rather than inlining its subqueries into
    # every statement (a SQL body cost a search 0.7 ms of planning per call, and a write
    # about as much).
    r"""
    CREATE OR REPLACE FUNCTION clew_vector(doc text, weight "char") RETURNS tsvector
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path FROM CURRENT AS $$
    BEGIN
        RETURN setweight(to_tsvector('clew'::regconfig, clew_pieces(coalesce(doc, '')))
            || coalesce((SELECT string_agg('''' || replace(replace(f, '\', '\\'), '''', '''''')
                                           || ''':1', ' ')
                         FROM unnest(clew_forms(coalesce(doc, ''))) AS f)::tsvector, ''),
            weight);
    END $$
    """,
    # The phrase of some pieces, the last one a prefix when asked. The only text read as
    # tsquery syntax is a quoted piece, which holds no punctuation, so no quote.
    """
    CREATE OR REPLACE FUNCTION clew_phrase(pieces text, prefix boolean) RETURNS tsquery
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE
        WHEN NOT prefix OR pieces !~ '[^[:space:]]'
        THEN phraseto_tsquery('clew'::regconfig, pieces)
        WHEN pieces !~ '[[:space:]]'
        THEN to_tsquery('clew_prefix'::regconfig, '''' || pieces || ''':*')
        ELSE phraseto_tsquery('clew'::regconfig,
                              regexp_replace(pieces, '[[:space:]]+[^[:space:]]+$', ''))
            <-> to_tsquery('clew_prefix'::regconfig,
                           '''' || substring(pieces FROM '[^[:space:]]+$') || ''':*')
    END
    """,
    # One query term: the phrase of its pieces; also, for a term that is one word with
    # punctuation inside, that word as written (a quoted lexeme: quotes doubled,
    # backslashes escaped), which ranks an exact identifier first. Total on any text.
    r"""
    CREATE OR REPLACE FUNCTION clew_term(term text, prefix boolean) RETURNS tsquery
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path FROM CURRENT AS $$
    DECLARE
        forms text[] := clew_forms(term);
    BEGIN
        IF NOT prefix AND cardinality(forms) = 1 AND btrim(term) !~ '[[:space:]]' THEN
            RETURN ('''' || replace(replace(forms[1], '\', '\\'), '''', '''''') || '''')::tsquery
                || clew_phrase(clew_pieces(term), false);
        END IF;
        RETURN clew_phrase(clew_pieces(term), prefix);
    END $$
    """,
)


def index_ddl(table: str, columns: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """DDL for a table's search vector (a generated column over (column, weight) pairs)
    and its GIN index."""
    vector = " || ".join(f"clew_vector({column}, '{weight}')" for column, weight in columns)
    return (
        f"ALTER TABLE {table} ADD COLUMN search tsvector GENERATED ALWAYS AS ({vector}) STORED",
        f"CREATE INDEX {table}_search ON {table} USING gin (search)",
    )


# The FTS5 bm25 weights, as ts_rank_cd weights {D, C, B, A} (each at most 1): entries'
# summary 4 (A), tags and resolution 2 (B), detail 1 (C); records' title 3 (A), stderr 1
# (B), body 1 (C); a turn's content is one column (A).
ENTRIES_INDEX = index_ddl(
    "entries", [("summary", "A"), ("detail", "C"), ("tags", "B"), ("resolution", "B")]
)
TURNS_INDEX = index_ddl("turns", [("content", "A")])
RECORDS_INDEX = index_ddl("record_docs", [("title", "A"), ("body", "C"), ("stderr", "B")])


# Task messages and commands are searched through `record_docs`, as on SQLite: one row
# each, with an order of its own (`seq`) and the searchable text, a command's output cut
# to its head and tail. A trigger keeps it in the row's transaction.
RECORD_DOCS = """
    seq        bigint GENERATED ALWAYS AS IDENTITY,
    kind       text NOT NULL,
    ref_id     text NOT NULL,
    space      text NOT NULL,
    task_id    text,
    created_at text NOT NULL,
    title      text NOT NULL,
    body       text NOT NULL,
    stderr     text NOT NULL,
    PRIMARY KEY (space, seq),
    UNIQUE (space, kind, ref_id)
"""
RECORD_FUNCTIONS: tuple[str, ...] = (
    # Text cut to its head and tail, as store.migrations.bounded cuts it on SQLite.
    f"""
    CREATE OR REPLACE FUNCTION clew_cut(doc text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN length(doc) > {OUTPUT_HEAD + OUTPUT_TAIL}
        THEN left(doc, {OUTPUT_HEAD}) || ' … ' || right(doc, {OUTPUT_TAIL})
        ELSE coalesce(doc, '') END
    """,
    # Command output as text: UTF-8 as it is; other bytes escaped (`\\ooo`), which keeps
    # their ASCII words searchable and never fails the write.
    """
    CREATE OR REPLACE FUNCTION clew_output(value bytea) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    BEGIN
        RETURN clew_cut(convert_from(value, 'UTF8'));
    EXCEPTION WHEN OTHERS THEN
        RETURN clew_cut(encode(value, 'escape'));
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION clew_record_doc() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
        k text := CASE TG_TABLE_NAME WHEN 'actions' THEN 'action' ELSE 'message' END;
        new_title text := '';
        new_body text;
        new_stderr text := '';
    BEGIN
        IF TG_OP = 'DELETE' THEN
            DELETE FROM record_docs WHERE space = OLD.space AND kind = k AND ref_id = OLD.id;
            RETURN NULL;
        END IF;
        IF k = 'action' THEN
            new_title := clew_cut(CASE WHEN NEW.command IS NULL OR NEW.command = NEW.summary
                THEN NEW.summary ELSE NEW.summary || E'\\n' || NEW.command END);
            new_body := clew_output(NEW.stdout);
            new_stderr := clew_output(NEW.stderr);
        ELSE
            new_body := clew_cut(NEW.content);
        END IF;
        IF TG_OP = 'UPDATE' THEN
            UPDATE record_docs SET title = new_title, body = new_body,
                stderr = new_stderr
            WHERE space = NEW.space AND kind = k AND ref_id = NEW.id;
        ELSE
            INSERT INTO record_docs (kind, ref_id, space, task_id, created_at, title, body,
                                     stderr)
            VALUES (k, NEW.id, NEW.space, NEW.task_id, NEW.created_at, new_title, new_body,
                    new_stderr);
        END IF;
        RETURN NULL;
    END $$
    """,
)
# A trace decision's document, made by the SQL of SQLite's: its action, and its outcome
# with the other fields that have a value, one a line, each cut to its head and tail.
DECISION_TITLE = "clew_cut({row}action)"
DECISION_BODY = "clew_cut(" + decision_body("{row}", "E'\\n'") + ")"
DECISION_FUNCTIONS: tuple[str, ...] = (
    f"""
    CREATE OR REPLACE FUNCTION clew_decision_doc() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            DELETE FROM record_docs
            WHERE space = OLD.space AND kind = 'decision' AND ref_id = OLD.id;
            RETURN NULL;
        END IF;
        INSERT INTO record_docs (kind, ref_id, space, task_id, created_at, title, body, stderr)
        VALUES ('decision', NEW.id, NEW.space, NEW.task_id, NEW.created_at,
                {DECISION_TITLE.format(row="NEW.")}, {DECISION_BODY.format(row="NEW.")}, '');
        RETURN NULL;
    END $$
    """,
    # Decisions are never edited but for their validation status, which is not searched.
    "CREATE TRIGGER records_decision AFTER INSERT OR DELETE ON trace_decisions"
    " FOR EACH ROW EXECUTE FUNCTION clew_decision_doc()",
    # A store made before: its decisions' documents, in the order they were made, space by
    # space (row-level security lets a row be written only into the transaction's space).
    f"""
    DO $$
    DECLARE
        s text;
    BEGIN
        PERFORM set_config('clew.all_spaces', 'on', true);
        FOR s IN SELECT DISTINCT space FROM trace_decisions ORDER BY space LOOP
            PERFORM set_config('clew.space', s, true);
            INSERT INTO record_docs (kind, ref_id, space, task_id, created_at, title, body,
                                     stderr)
            SELECT 'decision', d.id, d.space, d.task_id, d.created_at,
                   {DECISION_TITLE.format(row="d.")}, {DECISION_BODY.format(row="d.")}, ''
            FROM trace_decisions d WHERE d.space = s ORDER BY d.seq, d.created_at, d.id;
        END LOOP;
        PERFORM set_config('clew.all_spaces', '', true);
        PERFORM set_config('clew.space', '', true);
    END $$
    """,
)
_RECORD_DOC = RECORD_FUNCTIONS[2]
assert "clew_output(NEW.stdout)" in _RECORD_DOC and "clew_output(NEW.stderr)" in _RECORD_DOC
# SQLite's migration 14: a command output's document holds the error lines of its middle
# (computed by the projection into stdout_errors and stderr_errors) between its head and
# tail; the trigger fires on a change of them too.
ERROR_LINE_FUNCTIONS: tuple[str, ...] = (
    f"""
    CREATE OR REPLACE FUNCTION clew_cut(doc text, middle text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN length(doc) > {OUTPUT_HEAD + OUTPUT_TAIL}
        THEN left(doc, {OUTPUT_HEAD}) || ' … ' || coalesce(middle || ' … ', '')
            || right(doc, {OUTPUT_TAIL})
        ELSE coalesce(doc, '') END
    """,
    """
    CREATE OR REPLACE FUNCTION clew_output(value bytea, middle text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    BEGIN
        RETURN clew_cut(convert_from(value, 'UTF8'), middle);
    EXCEPTION WHEN OTHERS THEN
        RETURN clew_cut(encode(value, 'escape'), middle);
    END $$
    """,
    _RECORD_DOC.replace(
        "clew_output(NEW.stdout)", "clew_output(NEW.stdout, NEW.stdout_errors)"
    ).replace("clew_output(NEW.stderr)", "clew_output(NEW.stderr, NEW.stderr_errors)"),
    "DROP TRIGGER records_action ON actions",
    "CREATE TRIGGER records_action AFTER INSERT OR DELETE OR UPDATE OF summary, command,"
    " stdout, stderr, stdout_errors, stderr_errors ON actions"
    " FOR EACH ROW EXECUTE FUNCTION clew_record_doc()",
)
RECORD_TRIGGERS: tuple[str, ...] = (
    "CREATE TRIGGER records_action AFTER INSERT OR DELETE OR UPDATE OF summary, command,"
    " stdout, stderr ON actions FOR EACH ROW EXECUTE FUNCTION clew_record_doc()",
    "CREATE TRIGGER records_message AFTER INSERT OR DELETE ON task_messages"
    " FOR EACH ROW EXECUTE FUNCTION clew_record_doc()",
)


# SQLite's migration 26: the documents of task names, goals, plan steps, final answers,
# patterns and guardrails, one per row and kind, kept by a trigger of each table.
OUTLINE_DOCS = """
    seq    bigint GENERATED ALWAYS AS IDENTITY,
    kind   text NOT NULL,
    ref_id text NOT NULL,
    space  text NOT NULL,
    body   text NOT NULL,
    PRIMARY KEY (space, seq),
    UNIQUE (space, kind, ref_id)
"""
NEWLINE = "E'\\n'"


def _outline_function(table: str) -> str:
    """The trigger function keeping one table's outline documents."""
    kinds = [k for k, t in OUTLINE_TABLES.items() if t == table]
    among = ", ".join(f"'{k}'" for k in kinds)
    updates = "\n".join(
        f"        UPDATE outline_docs SET body = {outline_text(k, 'NEW.', NEWLINE)}"
        f" WHERE space = NEW.space AND kind = '{k}' AND ref_id = NEW.id;"
        for k in kinds
    )
    inserts = "\n".join(
        "    INSERT INTO outline_docs (kind, ref_id, space, body)"
        f" VALUES ('{k}', NEW.id, NEW.space, {outline_text(k, 'NEW.', NEWLINE)});"
        for k in kinds
    )
    return f"""
    CREATE OR REPLACE FUNCTION clew_outline_{table}() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            DELETE FROM outline_docs
            WHERE space = OLD.space AND kind IN ({among}) AND ref_id = OLD.id;
            RETURN NULL;
        END IF;
        IF TG_OP = 'UPDATE' THEN
    {updates}
            RETURN NULL;
        END IF;
    {inserts}
        RETURN NULL;
    END $$
    """


OUTLINE_FUNCTIONS: tuple[str, ...] = tuple(
    statement
    for table, columns in OUTLINE_COLUMNS.items()
    for statement in (
        _outline_function(table),
        f"CREATE TRIGGER outline_{table} AFTER INSERT OR DELETE OR UPDATE OF {columns}"
        f" ON {table} FOR EACH ROW EXECUTE FUNCTION clew_outline_{table}()",
    )
)
OUTLINE_INDEX = index_ddl("outline_docs", [("body", "A")])


def outline_backfill() -> str:
    """A store made before: its rows' outline documents, space by space (row-level security
    lets a row be written only into the transaction's space), in the order they were made."""
    from clew.store.migrations import outline_backfill as documents

    spaces = " UNION ".join(f"SELECT space FROM {t}" for t in OUTLINE_COLUMNS)
    return f"""
    DO $$
    DECLARE
        s text;
    BEGIN
        PERFORM set_config('clew.all_spaces', 'on', true);
        FOR s IN SELECT DISTINCT x.space FROM ({spaces}) x ORDER BY x.space LOOP
            PERFORM set_config('clew.space', s, true);
            INSERT INTO outline_docs (kind, ref_id, space, body)
            {documents(NEWLINE, " AND r.space = s")};
        END LOOP;
        PERFORM set_config('clew.all_spaces', '', true);
        PERFORM set_config('clew.space', '', true);
    END $$
    """
