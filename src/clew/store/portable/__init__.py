"""The SQL both backends run, written once: each subject's reads, the journal's write path and
reads, the keys' and the vector rows' writes, the record of imports, and what both verifies
report (findings.py). Each module is a part a store holds (store/parts.py lists them and the
contract methods each answers), reading and writing through the store as rows.StoreHost, in
`$n` placeholders over store/sql.py's Connection.

It may import the store's shared modules (contract/, rows.py, sql.py, migrations.py,
forgetting.py) and projection/; never sqlite/ or postgres/: what differs comes in as the
store's dialect (sql.Dialect) or as a part the backend hands over (journal.JournalBackend).
"""
