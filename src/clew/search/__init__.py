"""Search over everything recorded: understanding a question without a model (`question`,
`times`), what a record holds of it (`coverage`, `hits`), ranking one list from every source
(`ranking`), the service that runs it (`retrieval`), and the vector index with its embedding
models and approximate index (`vectors`, `embedding`, `ann`).

May import: `clew.state`, `clew.archive`, `clew.tasks` and everything below them.
"""
