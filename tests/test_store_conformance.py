"""The store conformance suite (clew.store.conformance) on each backend: a SQLite file, a
SQLite `:memory:` store (the fast reference facade tests may use) and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from clew.store.conformance import StoreConformance
from clew.store.contract import Store
from clew.store.postgres.store import PostgresStore
from clew.store.sqlite.store import SQLiteStore
from tests.conftest import postgres_url


class TestSQLiteFileStore(StoreConformance):
    @pytest.fixture(autouse=True)
    def _location(self, tmp_path: Path) -> None:
        self.path = str(tmp_path / "clew.db")

    def make_store(self, space: str) -> Store:
        return SQLiteStore(self.path, space)


class TestSQLiteMemoryStore(StoreConformance):
    shares_storage = False  # each `:memory:` connection is its own database

    def make_store(self, space: str) -> Store:
        return SQLiteStore(":memory:", space)


class TestPostgresStore(StoreConformance):
    has_roles = True

    @pytest.fixture(autouse=True)
    def _location(self) -> None:
        self.url = postgres_url()  # this worker's database; each test's spaces are fresh

    def make_store(self, space: str) -> Store:
        return PostgresStore(self.url, space)
