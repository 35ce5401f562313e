"""Layer 1: the task state an agent always keeps in its prompt, under a hard token budget
(`document`), the "where was I?" brief (`brief`), the service that serves both (`working`),
running summaries (`summaries`), an agent's kept list given back as a checklist
(`checklist`), file mirrors of a task (`mirror`) and the small YAML emitter
they print with (`yamltext`).

May import: `clew.archive`, `clew.tasks` and everything below them.
"""
