"""Work done after the write: the job outbox (`outbox`), who does its jobs (`worker`), the
utility model's routing and cost governor (`governor`), what the utility model does
(`utility`) and the maintenance that runs by itself (`upkeep`).

May import: `clew.search`, `clew.state`, `clew.archive`, `clew.tasks` and everything below.
"""
